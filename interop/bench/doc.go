// Package bench compares Conduit's client with the official Go SDK client
// (go-sdk v1.8.0), the mcp-go client (v1.2.1) and a raw hand-written
// JSON-RPC loop (the floor), on the same workloads against the same
// servers: connect, sequential calls, 64 concurrent calls, a 1 MiB
// result and tools/list of 500 tools; over stdio and Streamable HTTP, in
// the legacy and the modern era. The servers are servers/goserver (the
// official Go SDK) and servers/rawserver (no SDK).
//
// Benchmark names read Benchmark<Workload>/<client>/<server>-<transport>-<era>.
// Not run in CI; see interop/README.md for how to run and compare them.
package bench
