// Package engine is the per-connection engine of the Conduit MCP client: it
// negotiates the protocol era over a [transport.Conn], multiplexes
// concurrent requests on it, drives multi-round-trip requests (MRTR),
// answers legacy server requests, routes notifications and listen
// streams, and heals lost connections.
//
// [Connect] opens a connection and negotiates according to [Config.Mode]:
//
//   - [ModeAuto] sends server/discover (bounded by [Config.ProbeTimeout])
//     and follows the verdict of [negotiation.ClassifyProbe]: modern,
//     corrective re-probe (exactly once), legacy initialize on the same
//     connection, respawn then initialize, authorize then re-probe, or
//     retry with backoff (never a downgrade).
//   - [ModeModern] probes and refuses every legacy fallback.
//   - [ModeLegacy] sends initialize at once.
//   - [ModePinned] uses exactly [Config.PinVersion].
//
// The probe's outcome is read by the transport class ([transport.ClassOf],
// seed 003): on the stdio child process a probe timeout means a legacy
// server; on anything else (Streamable HTTP, WebSocket, in-memory) it is
// retried with backoff ([Config.Retry]), never a downgrade, and so is a
// connection dropped during the probe (on a new connection). JSON-RPC
// errors are legacy evidence on every transport. A
// transport that cannot connect at all fails Connect with its own error.
// After a modern verdict the era is pinned: later legacy evidence is an
// error, never a silent downgrade.
//
// The outcome is observable through [Session.Era],
// [Session.ProtocolVersion], [Session.Discover], [Session.InitializeResult]
// and [Session.Trace].
//
// # Recovery
//
// A session heals itself: when a stdio process exits (or any stream
// connection drops) after negotiation, the transport is connected again
// (the process respawned) and the pinned era re-negotiated; when a legacy
// HTTP session expires (404), it is initialized again. Listen streams
// end with the loss, except a durable one ([Session.ListenDurable]),
// which the engine opens again, with backoff, reporting
// [EventRelistened]; a JSON-RPC error answering a listen (-32601 from a
// server without subscriptions/listen) is final. Each completed
// re-negotiation closes the channel [Session.Reconnected] returned and
// bumps [Session.Generation]. After a legacy re-negotiation the engine
// itself restores the resource subscriptions tracked with
// [Session.TrackSubscription] and then calls [Config.OnRestored]. An era
// hint ([Config.EraHint]) that fails the negotiation is verified by the
// engine: it probes once on a new connection ([Session.HintFailed] then
// reports it).
//
// # The outcome rule
//
// Every request that ends without an answer is decided in one function
// (outcome.go), from the evidence of what happened to it and the replay
// policy ([Config.Replay], [CallOptions.Replay]; see [ReplayPolicy]):
//
//	evidence            examples                                        sent again?                              when not
//	------------------  ----------------------------------------------  ---------------------------------------  -------------------------------
//	answered            a result; a JSON-RPC error                      never                                    -
//	not written         held while not ready; the heal failed; Close    after the heal, any policy               not sent (ErrNotSent);
//	                    the connection closed before the write                                                   Close: ErrClosed
//	refused             HTTP 404 (unknown session) to its own POST      after the heal, any policy               not sent (ErrNotSent)
//	                    HTTP 408, 429, 503                              after the wait (Config.Retry),           not sent (ErrNotSent, with
//	                                                                    unless ReplayNone                        the HTTP error)
//	                    a refused dial, or a POST whose connection      no (nothing heals it)                    not sent (ErrNotSent)
//	                    failed before its body was sent
//	                    (transport.NetworkError.Unsent); HTTP 405 to
//	                    its own POST
//	                    HTTP 401, 403 that Config.Authorize did not     after Authorize, any policy              not sent (ErrNotSent, with
//	                    clear (no hook, its failure, the attempts                                                the auth error)
//	                    used up)
//	possibly delivered  written, wholly or in part, then the process,   once, if the policy allows: ReplayAll;   ErrOutcomeUnknown, with the
//	                    connection or response stream was lost          ReplaySafe for a read-only method        attempts that may have run
//	                    (whatever a resumption GET says afterwards);    ([ReadOnlyMethod]), Idempotent, or
//	                    HTTP 500, 502, 504 and the other 5xx            CallOptions.Safety (a tool's annotations)
//	                    a 2xx without a response to its own POST        no (the server would answer the same)
//
// A re-sent request is classified again: a replay that is possibly
// delivered and lost is [ErrOutcomeUnknown] whatever the policy, with
// Attempts 2; one that could not be sent (the heal failed), that the
// server refused (an HTTP status to its own POST that is no loss, a
// redirect not followed), or that failed otherwise without a JSON-RPC
// answer, after an attempt that may have run is ErrOutcomeUnknown too,
// never "not sent" or the failure alone (with Attempts 2 when the server
// answered the replay over the size limit or malformed).
// A request not written or refused is re-sent at most three times.
// Neither the caller's context ending, a request timeout, Close, nor an
// answer over the size limit (the server ran it) is a loss: nothing is
// re-sent. A call its caller ended still says whether the server may have
// run it (unanswered, in outcome.go): [ErrOutcomeUnknown] once an attempt
// was written, [ErrNotSent] before, beside what ended it; one that ends
// during the wait a Retry-After asked for, before the next attempt, is
// decided by the attempts before it (waitEnded): a refused one did not
// run. A Retry-After past Config.Retry's MaxElapsed is not waited for
// (the call fails at once, as when the retries are used up). The
// decisions are reported as [EventReplayed], [EventReplayRefused] and
// [EventRetried], whose Reason names the evidence in words ("the stdio
// process exited after the request was written; not sent again: the
// replay policy is none"), as do [OutcomeUnknownError.Reason] and
// [ConnectionLostError.Reason].
//
// # The engine
//
// One loop goroutine owns each connection's state (loop.go): the state
// machine (state.go, every change through setState), the current
// connection, the calls waiting for a ready state, the listen streams, the
// legacy server requests in flight and the notification queue. Readers,
// callers and short-lived I/O goroutines post events to it; it blocks in
// one select and never on I/O or user code. It publishes one immutable
// view of its state for other goroutines (Session.pub, the one atomic
// mirror). The loop also sequences every negotiation, Connect's and each
// heal's (driver.go, initialize.go): each step's I/O — a probe, initialize,
// notifications/initialized, a (re)connect or respawn, the Authorize hook,
// a backoff wait — runs off the loop and posts its outcome back (evStep):
// during Connect on Connect's own goroutine, which waits for the outcome
// anyway, otherwise on a short-lived goroutine; on the loop, package
// negotiation says what the outcome means and the next step starts.
// Connect's goroutine also plays the loop's part until something else
// posts an event (Session.start): a connect whose negotiation nothing
// interrupts never wakes the loop, and the loop's goroutine starts only
// with the first event posted after it (a read, a call that waits for the
// session or is abandoned, an event for OnEvent: plain calls need none);
// Close plays its part for a session that never had one
// (closeIdle), so a session nothing happened to has no loop goroutine,
// makes none of the loop's channels (they come with the loop, the
// dispatcher's with the dispatcher) and is joined by the last of its
// goroutines to end, not by one of Close's own (TestIdleSessionLoop,
// TestConnectGoroutines). Durable listen streams are re-opened the
// same way, paced (relisten.go). Every outgoing request takes one send path (send.go:
// register, write, then await), whose first step lets a plain call (when
// the session is ready) and a negotiation request (on the current
// connection) register directly in the lock-guarded pending table. The message tap ([Config.Tap]) sits at the single read point
// (the reader; on Streamable HTTP it starts only once the connection has
// something to read, transport.ReadWaker, so an idle HTTP session holds
// no goroutine in Read) and the single write point (Session.write). Incoming server
// requests and notifications are dispatched by the routes of package
// internal/route, the one table of the methods the client routes.
//
// An optional keepalive ([Config.Liveness], keepalive.go) heals the
// connection the same way when the peer leaves a keepalive request
// unanswered ([EventKeepAliveTimeout]); the same setting paces re-listens.
//
// # Authorization
//
// An HTTP 401 or 403, to the probe, to initialize or to any later request
// (an expired token, a 403 insufficient_scope step-up, a moved
// authorization server), calls [Config.Authorize] with the challenge on
// the refused request's goroutine and then repeats that exchange: a few
// times for negotiation, at most twice per request or notification
// ([Session.Notify]). Without Authorize, or
// when it does not help, the error is an [*AuthRequiredError].
//
// After the legacy handshake on a transport with a background stream for
// server messages (the legacy HTTP GET stream, [transport.StreamReadyWaiter])
// the session waits up to [StreamReadyTimeout] for that stream to open
// before it reports ready, because a server may send a request on it at
// once and drop it if the stream is not open yet. The session opens that
// stream ([transport.StreamDeferrer]) at connect only when something can
// arrive on it that the client acts on: the client declared sampling,
// elicitation, roots, tasks or experimental capabilities, or the server
// declared logging, a listChanged or tasks and a listener of the handler
// (or a Middleware) receives them; otherwise it opens it (and waits the
// same way) before the first resources/subscribe or logging/setLevel,
// before the first list request of a kind whose listChanged the server
// declares, and on [Session.WantServerMessages]. See stream.go.
//
// # Concurrency
//
// One goroutine per session (the loop) owns the session state: the state
// machine, the current connection, calls held while not ready, legacy
// server requests in flight, listen streams and the notification queue.
// Callers, the transport reader and the negotiation steps' I/O talk to
// it by message; it blocks in exactly one select and never runs user code or
// blocking I/O. Writes happen on the caller's goroutine.
//
// The one exception is the pending-call table (request ids, the calls
// awaiting a response, progress tokens): a small struct with its own
// mutex, held only for map updates and non-blocking sends, so that a call
// costs no round trip through the loop. While the session is ready a
// caller registers its request there itself and writes it; a negotiation
// request does the same on the current connection in any state until the
// session fails or closes; the reader delivers a response to either
// straight to the waiting caller, and a connection that reads the answer
// on the writer's goroutine (Streamable HTTP: transport.ResponseTaker)
// hands it there without the reader. The loop stays in charge: it opens the
// table to the direct registration of plain calls only in a ready state,
// on the current connection, and shuts it (under the same mutex) when it
// leaves that state, when the connection is lost (also shut by the reader
// at a terminal read error and by a caller that reports a lost
// connection, so that a replay waits for the heal) and at Close, where it
// retires every pending call. Everything else still goes through the
// loop: calls made while not ready, listen streams, and responses to
// calls whose result must follow their progress and log notifications
// ([CallOptions.Progress], [CallOptions.LogLevel]);
// so do all notifications and server requests. A response to a request
// that is no longer pending (abandoned, timed out, retired) is dropped, as
// is progress for one of ours that has finished. User code runs on:
//
//   - one dispatcher goroutine, for notifications and progress callbacks,
//     in arrival order (started with the first of them: a session that
//     gets none has none); a call made with [CallOptions.Progress] or
//     [CallOptions.LogLevel] returns only after the dispatcher delivered
//     everything that arrived before its response (bounded by the call's
//     context);
//   - one tracked goroutine per legacy server request (ping, sampling,
//     elicitation, roots), with a context cancelled by the server's
//     notifications/cancelled or by Close;
//   - the caller's own errgroup, for MRTR input requests.
//
// All methods of [*Session] and [*Stream] are safe for concurrent use.
//
// # Backpressure
//
// The notification queue holds [MaxQueuedNotifications] entries and
// [MaxQueuedNotificationBytes] of params; when a
// slow [Config.OnNotification] lets it fill up, a notification equal to
// one still queued (list_changed of one kind, resources/updated of one
// URI) is coalesced with it, and otherwise the oldest entry is dropped.
// Nothing is lost silently: every drop is counted, logged and reported
// as [EventDropped] with its Count (overload.go). The reader never blocks
// on user code.
// A listen [Stream] buffers [StreamBuffer] notifications. Beyond that, a
// change notification (list_changed, resources/updated) is held back and
// an equal one already held absorbs it (counted as [EventDropped]); any
// other notification, or more than 64 held, ends the stream with
// [ErrStreamOverflow] (the subscription is cancelled on the server; a
// durable stream listens again), so that no change notification is ever
// lost silently. At most
// [MaxConcurrentServerRequests] legacy server requests are served at once
// (the excess is answered with a JSON-RPC error, "client busy", by one
// short-lived writer goroutine; refusals waiting for a server that does
// not read them, beyond 65,536 or 4 MiB of ids, are dropped and counted),
// and an MRTR round, or a task's input_required status, may carry at most
// [MaxInputRequests] input requests.
//
// # Cancellation
//
// A call whose context ends returns ctx.Err() at once. The server is told
// off the caller's path, from a tracked goroutine bounded by
// [CancelNotifyTimeout]: notifications/cancelled on stdio, memory,
// WebSocket and legacy HTTP, where the request's response stream is also
// abandoned ([transport.StreamCanceler]) so that it is no longer read or
// resumed; closing the response stream on modern HTTP. The deadline
// ([Config.RequestTimeout], [CallOptions.Timeout]) counts from the call's
// start, the write included, and progress does not extend it; the idle
// timeout ([Config.IdleTimeout], [CallOptions.IdleTimeout]) is reset by
// progress.
//
// # Errors
//
// Server errors are [*jsonrpc.Error] (match with errors.Is against the
// jsonrpc sentinels). Session failures are [ErrClosed], [ErrNotModern],
// [ErrStreamOverflow], [ErrCloseTimeout], [*ConnectionLostError]
// ([ErrConnectionLost]), [*RequestTimeoutError] ([ErrRequestTimeout]),
// [*ProtocolError] ([ErrInvalidResponse], [ErrUnexpectedInputRequest],
// [ErrTooManyInputRounds]), [*MissingCapabilityError], [*InputError],
// [*AuthRequiredError] and [*NegotiationError] (which wraps
// [*negotiation.Error], [*negotiation.UnsupportedProtocolVersionError],
// an [*AuthRequiredError] or a transport error). Transport errors
// ([*transport.HTTPError], [*transport.NetworkError]) pass through. Use
// errors.Is and errors.As.
package engine
