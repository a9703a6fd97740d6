package transport

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// Transport makes connections to one server. Connect may be called again
// after a connection ended: for a command that respawns the process, for
// HTTP it starts afresh. That is how the session layer restarts a server.
type Transport interface {
	// Connect opens a new connection. It blocks until the connection is
	// usable or ctx ends. It may be called concurrently.
	Connect(ctx context.Context) (Conn, error)
}

// Conn is one live connection to a server.
//
// Read is called from one goroutine at a time; Write may be called
// concurrently with Read and with other Writes; Close may be called at any
// time, from any goroutine, more than once.
type Conn interface {
	// Read blocks until the next message from the server arrives, ctx
	// ends, or the connection ends. After the connection ended it returns
	// an error matching [ErrClosed] or a more specific error ([*ExitError]
	// for a process, [*HTTPError], …) on every call.
	//
	// Two errors are not terminal; the connection stays usable and Read
	// may be called again. [*StreamError] (Streamable HTTP) reports that
	// the response to one request was lost (its stream ended or broke
	// first, and a legacy resumption failed); none is reported for a
	// stream closed by [StreamCanceler.CancelStream]. A
	// [*jsonrpc.DecodeError] with a valid ID (every transport: lines,
	// WebSocket messages, events of Streamable HTTP and HTTP+SSE) reports an answer to that id that is not a valid JSON-RPC message
	// (both or neither of result and error, a malformed error, a wrong
	// jsonrpc version, nesting too deep to decode); input that is not JSON,
	// or names no call, is logged and skipped.
	Read(ctx context.Context) (jsonrpc.Message, error)
	// Write sends one message. ctx bounds the send; on HTTP it bounds the
	// POST until the response headers arrive (the body of a response
	// stream is then read in the background and delivered by Read). It may
	// block; it may be called concurrently. With a ctx that has already
	// ended it sends nothing and returns ctx.Err().
	//
	// Write does not retain msg, nor any buffer it refers to (such as a
	// Request's Params), after it returns: the message is encoded before
	// Write returns, and a transport that needs the bytes later (an HTTP
	// body still being sent, a retry) keeps its own copy. Callers reuse
	// their messages and buffers.
	Write(ctx context.Context, msg jsonrpc.Message) error
	// Close ends the connection and joins every goroutine it started;
	// for a process it runs the shutdown ladder. It is idempotent and
	// bounded.
	Close() error
}

// Optional connection abilities, discovered by type assertion.

// SessionIDer is implemented by connections that have a session id (legacy
// Streamable HTTP).
type SessionIDer interface {
	// SessionID returns the current session id, or "".
	SessionID() string
}

// ProtocolVersionSetter is implemented by connections whose behaviour
// depends on the negotiated protocol version (HTTP and WebSocket). A modern
// version (2026-07-28 and later) selects the stateless behaviour; a legacy
// version the session behaviour (session id, GET stream, DELETE); "" means
// "not negotiated yet" (no MCP-Protocol-Version header, as on initialize).
type ProtocolVersionSetter interface {
	// SetProtocolVersion must not block; it may be called concurrently.
	SetProtocolVersion(version string)
}

// StreamCanceler is implemented by connections that can abandon the
// response stream of one request: Streamable HTTP, in both eras. In the
// modern era closing the stream is the cancellation; in the legacy era the
// caller also sends notifications/cancelled, and CancelStream stops the
// connection from reading (and resuming, with GET and Last-Event-ID) a
// stream whose response nobody waits for any more.
type StreamCanceler interface {
	// CancelStream closes the response stream of request id, if one is
	// open (or abandons its POST if the response headers have not
	// arrived), and reports whether it was. It must not block. No
	// [*StreamError] is reported for a stream closed this way.
	CancelStream(id jsonrpc.ID) bool
}

// StreamReadyWaiter is implemented by connections that open a stream for
// server-initiated messages in the background (the legacy Streamable HTTP
// GET stream). A server may send a request on that stream as soon as the
// session is initialized, and drops it if the stream is not open yet; the
// session layer therefore calls WaitStreamReady after the handshake
// (bounded) before it reports the session ready.
type StreamReadyWaiter interface {
	// WaitStreamReady blocks until the background stream's response
	// headers arrived, or its opening failed or was refused (405), or the
	// connection closed; it returns nil then. It returns at once (nil) when
	// no such stream is wanted. It returns ctx.Err() when ctx ends first.
	// A failure of the stream is never reported here: the stream is
	// optional.
	WaitStreamReady(ctx context.Context) error
}

// StreamDeferrer is implemented by connections whose background stream
// for server-initiated messages (the legacy Streamable HTTP GET stream)
// the session may defer: the spec makes that stream optional for the
// client, and a session whose capabilities and the server's leave nothing
// to arrive on it need not open it at connect.
type StreamDeferrer interface {
	// DeferStream keeps the background stream closed until OpenStream. It
	// must be called before the handshake that would open the stream; it
	// has no effect once OpenStream was called.
	DeferStream()
	// OpenStream lets the background stream open: at once when the
	// session is already initialized, else when it would have opened
	// without DeferStream. [StreamReadyWaiter.WaitStreamReady] then waits
	// for it.
	OpenStream()
}

// OriginReader is implemented by connections that can tell on which
// request's response stream a message arrived: Streamable HTTP, in both
// eras, where a server sends the requests and notifications that concern
// a request on that request's POST response stream. The session layer
// uses it to tie a legacy server request to the call that caused it.
type OriginReader interface {
	// ReadOrigin is Read, and also returns the id of the request whose
	// response stream carried the message (a legacy stream resumed with
	// GET and Last-Event-ID included); the zero ID for a message that
	// came on no request's stream (the standalone GET stream) and
	// whenever the error is not nil.
	ReadOrigin(ctx context.Context) (jsonrpc.Message, jsonrpc.ID, error)
}

// ResponseTaker is implemented by connections that read the answer to a
// request on the goroutine that wrote it: Streamable HTTP, where the
// answer is the body of the request's own POST. The session layer uses it
// to hand such a response straight to the caller waiting for it, without
// the hop through its Read loop.
type ResponseTaker interface {
	// TakeResponses sets take, which the connection calls with a response
	// that answers the request of the Write that read it (a JSON body, or
	// an event stream that carried nothing before the response), on that
	// Write's goroutine or its stream's, before Read would have it. A
	// response take accepts (it returns true) is not delivered by Read;
	// one it refuses is, as before. Call it before the first Write.
	TakeResponses(take func(*jsonrpc.Response) bool)
}

// ReadWaker is implemented by connections that may have nothing for Read
// for long, or ever: Streamable HTTP, where every answer to a request is
// taken by the writer (see [ResponseTaker]) and the rest comes only on
// streams the session opens. The session layer then starts reading when
// the connection first has something for Read, not at once, and an idle
// connection costs no goroutine blocked in Read.
type ReadWaker interface {
	// WakeReader sets wake, which the connection calls once, on any
	// goroutine, before the first message or error is there for Read:
	// at the latest in Close, after which Read returns [ErrClosed]. Call
	// it before the first Write.
	WakeReader(wake func())
}

// Kinder is implemented by every connection of this package, so that the
// session layer can tell stdio-like transports (where a probe timeout means
// legacy) from HTTP-like ones (where it means retry).
type Kinder interface {
	// Kind returns "stdio", "http", "websocket", "sse", "memory" or
	// "stream".
	Kind() string
}

// Transport kinds returned by [Kinder].
const (
	KindStdio     = "stdio"
	KindHTTP      = "http"
	KindSSE       = "sse"
	KindWebSocket = "websocket"
	KindMemory    = "memory"
)

// ErrClosed is returned by operations on a closed connection.
var ErrClosed = errors.New("transport: connection closed")

// ErrSessionExpired matches the error of a legacy HTTP request answered 404
// while a session id was set: the client must initialize again.
var ErrSessionExpired = errors.New("transport: session expired")

// ErrStreamBroken matches the error of a response stream that ended before
// the response arrived (see [*StreamError]).
var ErrStreamBroken = errors.New("transport: response stream ended before the response")

// MaxErrorBody is how much of an HTTP error body is kept in [HTTPError].
const MaxErrorBody = 64 << 10

// HTTPError is an HTTP exchange that did not succeed: a status outside 2xx,
// or a 2xx with a body that is neither JSON nor an event stream. It carries
// what the probe classifier needs.
type HTTPError struct {
	// Method is the HTTP method (POST, GET, DELETE).
	Method string
	// URL is the endpoint.
	URL string
	// StatusCode is the HTTP status.
	StatusCode int
	// ContentType is the Content-Type header of the response.
	ContentType string
	// Body is the response body, at most [MaxErrorBody] bytes.
	Body []byte
	// WWWAuthenticate is the WWW-Authenticate header (401/403).
	WWWAuthenticate string
	// RetryAfter is the parsed Retry-After header; 0 when absent.
	RetryAfter time.Duration
	// Response is the JSON-RPC response found in Body, if Body held one
	// (as JSON or as an event stream); nil otherwise.
	Response *jsonrpc.Response
	// SessionExpired is set on a 404 to a request that carried a session
	// id; the error then also matches [ErrSessionExpired].
	SessionExpired bool
}

func (e *HTTPError) Error() string {
	s := fmt.Sprintf("transport: %s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Response != nil && e.Response.Error != nil {
		s += fmt.Sprintf(" (JSON-RPC %d %q)", e.Response.Error.Code, e.Response.Error.Message)
	}
	return s
}

// Is makes a session-expiry 404 match [ErrSessionExpired].
func (e *HTTPError) Is(target error) bool {
	return target == ErrSessionExpired && e.SessionExpired
}

// Retryable reports whether the status is worth retrying: 408, 429 and 5xx.
func (e *HTTPError) Retryable() bool {
	return e.StatusCode == http.StatusRequestTimeout || e.StatusCode == http.StatusTooManyRequests || e.StatusCode >= 500
}

// ParseRetryAfter parses a Retry-After header value (seconds or HTTP date)
// relative to now. It returns 0 for an absent or invalid value, and the
// largest Duration for a wait longer than a Duration holds.
func ParseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if n, err := strconv.ParseUint(v, 10, 64); err == nil || errors.Is(err, strconv.ErrRange) {
		if n > math.MaxInt64/uint64(time.Second) {
			return math.MaxInt64
		}
		return time.Duration(n) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// ExitError reports a server process that ended.
type ExitError struct {
	// Command is the program that ran.
	Command string
	// Code is the exit code, or -1 if the process was killed by a signal.
	Code int
	// Signal is the signal that ended the process, or 0.
	Signal syscall.Signal
	// Stderr is the tail of what the process wrote to stderr.
	Stderr string
	// Err is the underlying error from os/exec, if any.
	Err error
}

func (e *ExitError) Error() string {
	s := "transport: server process " + strconv.Quote(e.Command) + " exited"
	if e.Signal != 0 {
		s += " on signal " + e.Signal.String()
	} else {
		s += " with code " + strconv.Itoa(e.Code)
	}
	if e.Stderr != "" {
		s += "; stderr: " + e.Stderr
	}
	return s
}

func (e *ExitError) Unwrap() error { return e.Err }

// Is makes every ExitError match [ErrClosed].
func (e *ExitError) Is(target error) bool { return target == ErrClosed }

// StreamError reports an HTTP response stream that ended (or broke) before
// the response to request ID arrived. In the modern era the request is
// lost and must be re-sent under a new id.
type StreamError struct {
	// ID is the request whose response was lost.
	ID jsonrpc.ID
	// Err is the read error, or nil for a clean end of stream.
	Err error
}

func (e *StreamError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("transport: response stream for request %s broke: %v", e.ID, e.Err)
	}
	return fmt.Sprintf("transport: response stream for request %s ended without a response", e.ID)
}

func (e *StreamError) Unwrap() error { return e.Err }

// Is makes every StreamError match [ErrStreamBroken].
func (e *StreamError) Is(target error) bool { return target == ErrStreamBroken }

// MessageTooLargeError reports a message over the configured limit. The
// connection cannot continue after it on stdio.
type MessageTooLargeError struct {
	// Limit is the configured maximum in bytes.
	Limit int
}

func (e *MessageTooLargeError) Error() string {
	return fmt.Sprintf("transport: message larger than the limit of %d bytes", e.Limit)
}

// endedError is Write's error once the connection is known to have ended
// before the write (HTTP+SSE: its event stream ended; WebSocket: its
// reader failed): the message was not sent. It matches [ErrClosed] and,
// unlike the error the connection ended with, wraps no [*NetworkError],
// the error of a message that may have been delivered.
type endedError struct{ end error }

func (e *endedError) Error() string {
	return "transport: not sent, the connection had ended: " + strings.TrimPrefix(e.end.Error(), "transport: ")
}

func (e *endedError) Is(target error) bool { return target == ErrClosed }

// NetworkError wraps a failure to reach the server (dial, reset, TLS). It
// is distinct from [HTTPError], which is an answer from the server.
type NetworkError struct {
	// Op is what was being done, e.g. "POST", "dial".
	Op string
	// URL is the endpoint.
	URL string
	// Err is the underlying error.
	Err error
	// Unsent reports that the request was not written, so no server has
	// it: its connection failed before the request's body was sent (a
	// POST whose dial failed or was still in progress).
	Unsent bool
}

func (e *NetworkError) Error() string {
	return "transport: " + e.Op + " " + e.URL + ": " + e.Err.Error()
}

func (e *NetworkError) Unwrap() error { return e.Err }

// Timeout reports whether the failure was a timeout.
func (e *NetworkError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout() || errors.Is(e.Err, context.DeadlineExceeded)
}
