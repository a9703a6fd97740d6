// Package scenarios holds Conduit's own tests of the client scenarios the
// MCP conformance suite (@modelcontextprotocol/conformance) has in its
// repository but no published release carries yet. Each test plays the
// scenario's mock server in Go, drives Conduit's public API as the
// scenario's contract asks, and grades the scenario's checks (same check
// ids, same thresholds); each cites the scenario file it mirrors. When a
// release carries a scenario, interop/conformance runs the release's
// instead and the mirror here can go.
package scenarios
