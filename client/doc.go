// Package client is Conduit's public face: a Model Context Protocol client
// that speaks both protocol eras on every transport.
//
//	c, err := client.Dial(ctx, "https://example.com/mcp")                       // Streamable HTTP (+ HTTP+SSE fallback)
//	c, err := client.Dial(ctx, "wss://example.com/mcp")                         // WebSocket
//	c, err := client.Connect(ctx, transport.Command("server", "--flag"),        // stdio
//		client.WithHandler(h))
//	defer c.Close()
//	for tool, err := range c.Tools(ctx) { … }
//	res, err := c.CallTool(ctx, "add", map[string]any{"a": 1, "b": 2})
//
// [Dial] and [Connect] negotiate the era ([WithProtocol]: [Auto] probes with
// server/discover and falls back to initialize; [Modern], [Legacy] and
// [Pin] restrict it). Afterwards every method works the same in both eras:
// listings walk cursors ([Client.Tools], [Client.Prompts],
// [Client.Resources], [Client.ResourceTemplates]),
// [Client.CallTool] and the typed [CallToolAs], [Client.GetPrompt],
// [Client.ReadResource], [Client.Complete], [Client.SetLogLevel],
// [Client.Ping], [Client.Subscribe] for change notifications, and tasks
// ([WithTaskAugmentation], [Client.AwaitTask]).
//
// The handler given to [WithHandler] may implement any interface of
// package handler (or be a handler.Funcs, checked by the compiler); what
// it implements decides the advertised client capabilities (a handler
// that implements nothing is refused at connect), and it serves server
// requests (legacy) and input requests (modern multi-round-trip requests
// and tasks) alike. Form elicitation
// answers are validated against the requested schema, with defaults
// applied ([handler.ValidateElicitation]), before they reach the server. The
// handler's change listeners hear list changes in both eras: legacy
// servers send them unsolicited, and in the modern era the client opens a
// subscriptions/listen stream for them at connect time.
//
// On modern Streamable HTTP, tools whose x-mcp-header annotations are
// invalid are left out of listings (logged, and listed by
// [Client.DroppedTools]), and tool calls carry the
// Mcp-Param-* headers the valid annotations ask for.
//
// A gateway relaying many callers over one client gives each request its
// caller's client capabilities and client info with [WithClientIdentity]
// (modern era; checked against what the handler can serve; refused in the
// legacy era, where they belong to the session).
//
// The events extension (io.modelcontextprotocol/events) has its own
// package, client/events, over a Client.
//
// Modern results that carry cache hints are served from a [cache.Store]
// while fresh ([WithCache]); negotiation verdicts can be remembered per server
// in an era store ([WithEraCache]) so that reconnecting skips the probe.
//
// # Concurrency
//
// A [Client] and a [Subscription] are safe for concurrent use. Handler
// methods run on goroutines of the session (never on the caller's, except
// for the input requests of [Client.AwaitTask]); listener interfaces and
// progress callbacks run in order on one dispatcher goroutine and must not
// block for long. [Client.Close] stops and joins every goroutine the
// client started and ends the server process of a command transport.
//
// # Cancellation
//
// Every blocking method takes a context; when it ends the call returns
// ctx.Err() at once and the server is told (notifications/cancelled, or
// closing the request's stream on modern HTTP). [WithTimeout] is a call's
// deadline, counted from its start, which progress does not extend;
// [WithIdleTimeout] bounds its silence and is reset by progress;
// [WithCallDefaults] sets them (or any call option) client-wide. By
// default neither is set: a long tool is never cut off at an arbitrary
// limit.
//
// # Replays
//
// A request lost with its connection (a stdio server that died, a broken
// response stream, an HTTP POST whose connection broke after the request
// was written, an expired legacy HTTP session), or answered with an HTTP
// 500, 502 or 504, is sent again only when that cannot run it twice, by
// default (see [ReplayPolicy]); otherwise it fails with an error matching
// [ErrOutcomeUnknown], and the next call works. A call that its context,
// a request timeout or [Client.Close] ends without an answer says the
// same beside what ended it: [ErrOutcomeUnknown] once it was written,
// [ErrNotSent] before. [WithReplayed] tells a caller that its result came
// from a replay; [WithConnEvents] reports every replay made or refused.
//
// # Errors
//
// Connect, Dial and the request methods fail with an [*Error], shaped
// like *net.OpError: Op is "connect" or the MCP method that failed, Kind
// says what kind of failure it was ([KindNetwork], [KindProcess],
// [KindAuth], [KindNegotiation], [KindServer], …; String gives a stable
// name for logs and metrics) and Err is the cause. What the server
// answered is a *jsonrpc.Error, matched by code
// (errors.Is(err, jsonrpc.ErrInvalidParams)); the typed errors of the
// layers below (*transport.HTTPError, *transport.ExitError,
// *protocol.URLElicitationRequiredError, …) stay reachable with
// errors.As, and a failed negotiation's steps are in [Error.Trace]. A few sentinels name what callers branch on: [ErrClosed],
// [ErrOutcomeUnknown], [ErrAuthRequired], [ErrNoCommonVersion] and
// [ErrNotSupported]. A value that does not match its
// schema is a [*handler.ValidationError] listing the problems.
//
// The text of an [*Error] follows one rule: one line; "client: ", the
// operation once, then what happened, then its cause; no name of a
// package below (the session, the negotiation, the transport) that a
// caller cannot act on. For example
//
//	client: tools/call: outcome unknown, the server may have executed the request (the connection was lost after the request was written; not sent again: the replay policy is none): connection lost: server process "./bin/crashy" exited with code 7
//	client: connect: negotiating protocol (modern): retries exhausted (network): POST http://127.0.0.1:8080/mcp: dial tcp 127.0.0.1:8080: connect: connection refused
//
// The types stay where they were: errors.As still finds each cause.
//
// A handler failure ends the request that caused it alike in both eras:
// an [*Error] of kind [KindHandler] ([KindInvalid] for an elicitation
// answer that does not match its schema) with the same text, wrapping the
// handler's error. In the legacy era the server is answered with the
// handler's *jsonrpc.Error (else -32603 with the handler's message) and
// decides what becomes of the request: a result is returned as it is; a
// JSON-RPC error stays reachable with errors.As but the failure reads as
// in the modern era. That holds when the server's request is tied to the
// request that caused it: on Streamable HTTP, by the request's response
// stream that carried it; on stdio, WebSocket, HTTP+SSE and in-memory
// pipes, when that request was the only one in flight as the server's
// request arrived. Untied, the server's error is the failure (kind
// [KindServer]).
//
// # Wire logging
//
// [WithMessageLog] (or [WithWireLog] with a *slog.Logger) sees every
// JSON-RPC message sent and received, on every transport.
package client
