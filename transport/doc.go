// Package transport carries JSON-RPC messages between a client and an MCP
// server: a subprocess over stdio ([Stdio], [Command]), Streamable HTTP in
// both eras ([StreamableHTTP]), the deprecated HTTP+SSE transport ([SSE]),
// WebSocket ([WebSocket]), an in-memory pair ([NewPipe]) and any byte
// stream the caller supplies — a Unix socket, a named pipe, an SSH channel —
// framed as stdio is ([Stream], [NewStream], [DialStream]).
//
// Every transport implements [Transport]; its connections implement
// [Conn]. Optional abilities are optional interfaces ([SessionIDer],
// [ProtocolVersionSetter], [StreamCanceler], [StreamReadyWaiter],
// [StreamDeferrer], [OriginReader], [ResponseTaker], [ReadWaker], [Kinder]).
//
// # Server keys
//
// A client remembers negotiation verdicts and cached results per server
// (client.WithEraCache, client.WithCache). A server reached with
// client.Dial is known by its endpoint URL; one reached with
// client.Connect by the key of a transport that implements
//
//	interface{ ServerKey() string }
//
// ([Stdio.ServerKey]: its command line). Two transports with the same key
// must reach the same server. Any other transport gets no era caching and
// a key unique to its connection. The method must not block and may be
// called concurrently.
//
// # Concurrency
//
// A [Conn]'s Read is called from one goroutine; Write and Close may be
// called from any. Close joins every goroutine the connection started.
//
// # HTTP connections and redirects
//
// The HTTP transports without an HTTPClient of their own share one pool,
// [DefaultPool] (configured as http.DefaultTransport, but apart from it,
// so that code closing http.DefaultTransport's idle connections, as
// httptest.Server.Close does, never breaks a request of ours): a
// connection reuses the idle TCP connections others left to the same
// server. Close ends every request and stream of its connection; the TCP
// connections it leaves idle belong to the pool, as with net/http's own,
// and [CloseIdleConnections] closes them (what a test that counts
// goroutines does first). Each connection keeps its own redirect
// policy and credentials: a redirect is followed within the origin of the
// request only; one to another origin fails with a [*RedirectError]
// naming both origins, unless CrossOriginRedirects is set, which follows
// it without body, credentials and custom headers; one from https to http
// is never followed. net/http sends a POST again by itself only when
// nothing of it was written, and, over HTTP/2, when its stream failed
// before the request was written whole: a POST an HTTP/2 server received
// whole and did not answer (a stream reset with PROTOCOL_ERROR, which
// net/http would re-send up to seven times) fails instead, as possibly
// delivered, and the engine's replay policy decides.
//
// # Cancellation
//
// Blocking calls take a context. Cancelling a Write's context abandons the
// send; on modern Streamable HTTP, [StreamCanceler.CancelStream] closes a
// request's response stream, which is that era's cancellation.
//
// # Errors
//
// Failures are typed: [*HTTPError] (an HTTP answer that was not a success,
// with status, content type, bounded body and WWW-Authenticate),
// [*ExitError] (the server process ended), [*StreamError] (a response
// stream ended early), [*MessageTooLargeError], [*RedirectError] and
// [*NetworkError]. Use
// [errors.As]; [ErrClosed], [ErrSessionExpired] and [ErrStreamBroken] work
// with [errors.Is].
package transport
