// Package conduittest provides a real, misbehaving-on-demand MCP server for
// testing the hosts that embed an MCP client, as net/http/httptest does
// for HTTP.
//
//	srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy))
//	c, err := client.Connect(ctx, srv.Transport())      // in-memory
//	c, err := client.Dial(ctx, srv.URL())               // Streamable HTTP
//	c, err := client.Dial(ctx, srv.WebSocketURL())      // WebSocket
//	c, err := client.Connect(ctx, &transport.SSE{URL: srv.SSEURL()}) // HTTP+SSE
//	c, err := client.Connect(ctx, srv.Command(t))       // a stdio subprocess
//
// The server speaks the modern era (2026-07-28: stateless, server/discover,
// per-request _meta, multi-round-trip requests, subscriptions/listen, the
// tasks extension), the legacy era (2025-11-25 and 2025-06-18: initialize,
// sessions, server-to-client requests), or both, choosing per request as a
// dual-era server does ([WithEra]). It closes with the test and leaks no
// goroutine. conduit serve runs the same server from the command line, for
// hosts written in any language.
//
// # Features
//
// Enough to exercise every client capability, in both eras:
//
//   - tools: echo {text}, add {a, b} (structured output), slow {steps,
//     delayMs} (progress when the call has a progress token), big {kib},
//     structured, headers (Mcp-Param-* headers), fail (a tool error),
//     rpc_error {code}, log {level, message} (logging, after SetLogLevel),
//     task {steps, input, fail} (tasks), load_shed;
//   - server-to-client requests (legacy) and input requests (modern):
//     sample (sampling), ask_user (form elicitation), ask_url (URL
//     elicitation), roots (roots/list);
//   - prompts greet {name}, simple, ask_prompt; resources
//     file:///hello.txt, file:///logo.png, file:///config.json,
//     file:///secret.txt and the template file:///{path}; completion;
//   - change notifications on demand: [Server.NotifyToolsChanged],
//     [Server.NotifyPromptsChanged], [Server.NotifyResourcesChanged],
//     [Server.NotifyResourceUpdated] (subscriptions in both eras),
//     [Server.EndListens], [Server.AbortListens], [Server.ExpireSession].
//
// # Faults
//
// A [Fault] makes the server misbehave on matching requests: answer an
// error or a malformed result, go silent, exit the process, write noise on
// stdout, answer an HTTP status, reset the connection, break an event
// stream, expire a session. [Faults] lists every kind with what it does
// (conduit serve --list-faults prints the same table) and [ProbeOutcomes]
// gives the fault behind each outcome of the era probe a dual-era client
// makes, so a host can be tested against each of them.
//
// # Recording
//
// The server records every message it receives: [Server.Received],
// [Server.Count] and [Server.Counts] let a test assert exactly what the
// host sent; [Server.WaitReceived] and [Server.WaitIdle] wait for it.
//
// # Transcripts
//
// A [Recorder] writes a client's session with any server (through the
// client's message log) to a file, one JSON-RPC message a line with its
// direction and time; [NewReplay] serves such a transcript back as a fake
// server that answers the recorded requests, so a session with a real,
// slow or paid server becomes a deterministic test. A request the
// transcript never saw is answered at once with an error and reported with
// a diff against the nearest recorded one. The Recorder redacts
// credentials by default (see [Recorder], [KeepCredentials]).
//
// # Stdio
//
// [Server.Command] spawns the test binary itself as the stdio server (it
// relays its stdin and stdout to the Server in the test, so recording,
// faults and notifications work as in-process); it needs [Main] or
// [ServeIfSpawned] in the package's TestMain.
package conduittest
