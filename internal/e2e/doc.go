// Package e2e holds Conduit's end-to-end negotiation tests. It has no
// non-test code: the tests drive the real client stack (client → session →
// transport) against the real dual-era server of internal/testserver over
// every transport — stdio (the cmd/testserver binary, built once per run),
// Streamable HTTP and WebSocket (httptest servers on 127.0.0.1) — in every
// negotiation mode (Auto, Modern, Legacy and pins of each version), one case
// per row of the probe table in the seeds, and assert what the server saw.
//
// TestNegotiationMatrix prints the matrix it ran as a Markdown table (rows ×
// transports, cells pass / FAIL / n.a.) with t.Log, and writes it to the file
// named by the environment variable CONDUIT_MATRIX_OUT when that is set.
// Each case asserts the era and version reached, the exact sequence of
// JSON-RPC methods the server received (stdio servers report it through
// cmd/testserver's -record file, one entry per process), the versions the
// negotiation messages carried, the typed error where one is due (errors.Is
// and errors.As only), and a working tools/call on every connection that
// negotiated. A case that fails because of a known, unfixed bug is listed in
// knownBroken with its root cause: it still runs, is reported as "known
// broken" in the table and logged, and fails the run once it passes.
package e2e
