// Package bench compares Conduit's client with the official Go SDK client
// (go-sdk v1.8.0), the mcp-go client (v1.6.0) and a raw hand-written
// JSON-RPC loop (the floor), on the same workloads against the same
// servers: connect, sequential calls, 64 concurrent calls, a 1 MiB
// result and tools/list of 500 tools; over stdio and Streamable HTTP, in
// the legacy and the modern era. The servers are servers/goserver (the
// official Go SDK) and servers/rawserver (no SDK, so that the server's
// own cost is as small as it gets).
//
// Benchmark names read Benchmark<Workload>/<client>/<server>-<transport>-<era>.
//
// Every client is built as its README shows, with the defaults a user
// gets: no HTTP client of the harness's (each library's default, which is
// http.DefaultTransport's shared pool for all three and for the raw loop,
// so a connect may reuse an idle TCP connection as it would in a
// program), go-sdk's standalone GET stream left on. The one option every
// cell has is the setting that picks the era, which each library needs:
// go-sdk's ClientSessionOptions.ProtocolVersion and mcp-go's
// WithProtocolVersion in both eras, Conduit's WithProtocol(Legacy) in the
// legacy cells only (its default, Auto, negotiates the modern era).
//
// What the harness guarantees: every client of one target talks to the
// same server process (HTTP) or the same server binary (stdio), with the
// same arguments; every workload but Connect connects and makes one
// untimed warm-up call before the timer starts (b.Loop resets the timer,
// ConcurrentCalls calls b.ResetTimer), so no client setup is inside the
// timed loop; allocations are reported (b.ReportAllocs) and are the
// client process's only. The raw floor decodes what the libraries hand
// their callers (content blocks and isError of a tools/call result, every
// field of every tool), so the floor does the same work minus the
// libraries' overhead. The clients of one target × era run next to each
// other; BENCH_ROUND=k rotates their order, for interleaved repeated
// rounds (see RESULTS.md for the commands and the latest results).
//
// BenchmarkConnectPaired is Connect with the clients taking turns inside
// one loop (each timed apart, ratios to the raw client reported), for
// ratios that a machine drifting between sub-benchmarks does not move
// (paired_table.py prints them); BENCH_CLIENTS=conduit,raw,… picks the
// clients that take turns, and a name listed twice takes two turns.
//
// Where the clock is too noisy to see a change of a few hundred
// instructions, cg_table.py compares two runs of one benchmark under
// valgrind's cachegrind per operation: instructions and cache misses, per
// package and function (RESULTS.md, session 7, has the commands).
//
// BenchmarkIdle (unix) measures what an idle connected client costs, per
// connection: heap, goroutines, OS threads held in system calls, wake-ups
// and CPU time per minute of an idle window (BENCH_IDLE; see idle_test.go); run it with
// -test.benchtime 1x.
//
// The benchmarks are not run in CI; the package's tests are (`go test
// ./bench`, without -bench): TestBenchClients checks every client against
// every server once, in the era asked; the others check the harness's
// helpers.
package bench
