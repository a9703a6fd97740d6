// Package testserver is a real, dual-era MCP server used by Conduit's tests,
// with every knob they need. Package conduittest is its small public face
// (for users, the examples, the CLI's embedded server and conduit serve);
// every fault kind here is reachable there.
//
// It speaks the modern era (2026-07-28: stateless, per-request _meta,
// server/discover, MRTR, subscriptions/listen, the tasks extension) and the
// legacy era (2025-11-25 and 2025-06-18: initialize, sessions,
// server-to-client requests, resources/subscribe, 2025-11-25 core tasks), and
// it selects the era per request the way the specification describes for a
// dual-era server: a request whose params._meta carries
// io.modelcontextprotocol/protocolVersion is handled statelessly in the
// modern era; initialize opens a legacy session.
//
// One [Server] serves any number of connections at once, over
//
//   - [Server.ServeStream]: newline-delimited JSON (stdio, in-memory pipes),
//   - [Server.Handler]: Streamable HTTP, both eras on one endpoint,
//   - [Server.WebSocketHandler]: WebSocket, subprotocol "mcp", one message
//     per text frame,
//   - [Server.SSEHandler]: the deprecated 2024-11-05 HTTP+SSE transport.
//
// # Features
//
// Tools (in list order): echo {text}; add {a, b} (structuredContent {sum},
// outputSchema); slow {steps, delayMs} (progress when the request has a
// progressToken, debug logs); big {kib}; structured (outputSchema and
// structuredContent); headers {region, priority, verbose, note} (the first
// three annotated x-mcp-header Region/Priority/Verbose; reports the
// Mcp-Param-* headers it got); bad_header_type and bad_header_name (INVALID
// x-mcp-header annotations that clients must drop on HTTP); ask_user
// (elicitation form), ask_url (URL elicitation), sample (sampling), roots
// (roots/list) — MRTR with a signed requestState in the modern era, real
// server-to-client requests in the legacy era; load_shed (requestState
// only, once); fail (isError); rpc_error {code} (a JSON-RPC error);
// log {level, message}; task {steps, input, fail, required} (tasks
// extension in the modern era, task augmentation in 2025-11-25).
//
// Prompts: greet {name}, simple, ask_prompt (MRTR). Resources:
// file:///hello.txt (text), file:///logo.png (blob), file:///config.json,
// file:///secret.txt (MRTR), and the template file:///{path}. Completion
// for greet's name and the template's path. Lists paginate with
// [Options.PageSize]; cacheable modern results carry ttlMs and cacheScope
// ([Options.TTL], [Options.CacheScope]). [Options.Conformance] adds the
// fixtures of the MCP conformance suite (see conformance/run.sh).
// [Options.Skills] serves the skills extension (skills.go): skills/list,
// skills/get, resources/directory/read and the skills' files, with good
// entries and bad ones (wrong digest, wrong size, differing frontmatter,
// a tampered supporting file, a dynamic skill, an unlisted skill).
//
// Triggers: [Server.NotifyToolsChanged], [Server.NotifyPromptsChanged],
// [Server.NotifyResourcesChanged], [Server.NotifyResourceUpdated],
// [Server.EndListens], [Server.AbortListens], [Server.PingClients],
// [Server.ExpireSession].
//
// # Faults
//
// A server can be told to misbehave with [Fault] values (in
// [Options.Faults], or at run time with [Server.SetFaults] and
// [Server.AddFault]): every probe outcome of the negotiation seed table,
// HTTP statuses and bodies, connection resets, broken streams, silence,
// process exit, stdout noise, oversized messages, session expiry. A fault
// matches requests by JSON-RPC method and applies after Skip matching
// requests for Times requests.
//
// # Recording
//
// Every message the server receives is recorded with its transport, HTTP
// headers and session id; [Server.Received] returns the record so tests can
// assert exactly what a client sent. [Server.WaitReceived] and
// [Server.WaitIdle] let a test wait, on channels, until a message arrived
// and until the server finished acting on it.
//
// # Concurrency
//
// All methods of [Server] are safe for concurrent use. [Server.Close] ends
// every held stream, listen and session and joins the goroutines the server
// started; call it before closing an httptest.Server that serves
// [Server.Handler], because long-lived SSE responses only end then.
//
// # Errors
//
// Bad input from a peer is answered with a JSON-RPC error (or the HTTP
// status the specification names) and never panics. [ServeStream] returns
// [ErrExit] when a [FaultExit] fired, so a stdio main can exit the process.
package testserver
