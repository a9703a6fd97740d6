package transport

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
)

// StreamableHTTP is the Streamable HTTP transport, in both eras. Its zero
// value, with URL set, works. Fields must not be changed while Connect
// runs; each connection copies what it needs.
//
// The era follows [ProtocolVersionSetter.SetProtocolVersion]:
//
//   - modern (2026-07-28 and later): POST only; every POST carries
//     MCP-Protocol-Version and Mcp-Method, requests also Mcp-Name where
//     the method has one; no session id, no GET stream, no DELETE.
//     [StreamCanceler.CancelStream] closes a request's response stream,
//     which is that era's cancellation.
//   - legacy (2025-06-18, 2025-11-25): the session id returned with the
//     initialize response is echoed on every later request; the optional
//     GET stream carries server requests and notifications; a response
//     stream that breaks after an event id is resumed with GET and
//     Last-Event-ID before it is declared lost, unless
//     [StreamCanceler.CancelStream] abandoned it (an event a server
//     replays there, or on the GET stream reopened, with the id and data
//     of one delivered before is skipped: event ids are unique within a
//     session); Close ends the session
//     with DELETE. [StreamReadyWaiter.WaitStreamReady] waits for the GET
//     stream to open; [StreamDeferrer] lets the session defer it. The
//     Write of notifications/initialized waits for its answer (bounded
//     by its context and ResponseHeaderTimeout) and fails only when its
//     context ended or the connection closed: after any other failure the
//     next Write sends it again first, so the server has it before
//     anything else.
//   - "" (not negotiated yet, e.g. initialize): no MCP-Protocol-Version.
type StreamableHTTP struct {
	// URL is the MCP endpoint.
	URL string
	// HTTPClient sends the requests. nil means a client with no overall
	// Timeout over [DefaultPool], the connection pool every connection
	// without a client of its own shares (configured as
	// http.DefaultTransport: dial and TLS handshake timeouts
	// [DefaultDialTimeout], [DefaultTLSHandshakeTimeout]): a new
	// connection reuses an idle TCP connection to the same server, and
	// the idle connections left after Close belong to that pool, as with
	// net/http's own ([CloseIdleConnections] closes them). A given client is copied and its CheckRedirect wrapped (see
	// CrossOriginRedirects), its Transport shared as it is. Its Timeout
	// should be zero: it would end long tool calls and event streams.
	HTTPClient *http.Client
	// CrossOriginRedirects makes a request redirected to another origin
	// (scheme, host, port) follow the redirect without its body and
	// without credentials or custom headers: Authorization, cookies,
	// DPoP, the session id, every header of Header and whatever
	// TokenSource and HeaderFunc set are dropped on that hop and every
	// later one. By default (false) such a redirect is not followed: the
	// request fails with a [*RedirectError] naming both origins (matching
	// [ErrCrossOriginRedirect]). Redirects within the origin are followed
	// either way, at most 10 (unless HTTPClient's CheckRedirect decides
	// otherwise), and a redirect from https to http never is.
	CrossOriginRedirects bool
	// Header holds static headers added to every request (they never
	// override the protocol headers). nil means none.
	Header http.Header
	// SensitiveHeaders names the headers of Header that are credentials
	// (an API key, say). Every header of Header is dropped from a request
	// redirected to another origin (see CrossOriginRedirects), so this
	// list changes nothing; it is kept for the programs that set it.
	SensitiveHeaders []string
	// HeaderFunc, when set, is called last for every request (POST, GET,
	// DELETE) and may change its headers; an error aborts the request.
	HeaderFunc func(ctx context.Context, req *http.Request) error
	// TokenSource, when set, supplies the bearer token sent as
	// Authorization on every request. nil sends none (unless Header or
	// HeaderFunc set one). Authorization never follows a redirect to
	// another origin.
	TokenSource TokenSource
	// ResponseHeaderTimeout bounds waiting for the response headers of the
	// requests whose answer should come at once: POSTs of notifications
	// and responses, the GET stream and DELETE. POSTs of requests are
	// bounded only by the Write context, because a server answering with
	// JSON may hold the headers until the result is ready. 0 means
	// [DefaultResponseHeaderTimeout]; negative means no bound.
	ResponseHeaderTimeout time.Duration
	// MaxMessageSize limits one JSON response body and one event of an
	// event stream, in bytes. 0 or negative means [DefaultMaxMessageSize].
	MaxMessageSize int
	// Logger receives diagnostics. nil discards them.
	Logger *slog.Logger
	// DisableGETStream stops a legacy connection from opening the optional
	// GET stream. Resumption of a broken response stream still uses GET.
	DisableGETStream bool
	// ReconnectBackoff and MaxReconnectBackoff pace the reconnects of a
	// legacy GET stream (and of a resumed response stream) after
	// failures: the first wait, doubling up to the cap (a server's
	// Retry-After and retry field are honoured as well). 0 or negative
	// selects 1 s and 30 s.
	ReconnectBackoff    time.Duration
	MaxReconnectBackoff time.Duration
}

var _ Transport = (*StreamableHTTP)(nil)

// Connect returns a connection to t.URL. It does no network I/O: the first
// Write makes the first request. It fails only for an invalid URL.
func (t *StreamableHTTP) Connect(ctx context.Context) (Conn, error) {
	u, err := parseEndpoint(t.URL)
	if err != nil {
		return nil, err
	}
	log := discardLogger(t.Logger)
	raw := u.String()
	endpoint, err := endpointOf(u, t.URL, raw)
	if err != nil {
		return nil, err
	}
	c := &httpConn{
		url:        raw,
		endpoint:   endpoint,
		client:     newHTTPClient(t.HTTPClient, t.CrossOriginRedirects, t.Header, log),
		header:     t.Header.Clone(),
		headerFunc: t.HeaderFunc,
		tokens:     t.TokenSource,
		rht:        t.ResponseHeaderTimeout,
		maxMsg:     t.MaxMessageSize,
		log:        log,
		disableGET: t.DisableGETStream,
		backoffs:   [2]time.Duration{t.ReconnectBackoff, t.MaxReconnectBackoff},
	}
	if c.rht == 0 {
		c.rht = DefaultResponseHeaderTimeout
	}
	if c.maxMsg <= 0 {
		c.maxMsg = DefaultMaxMessageSize
	}
	// The connection's lifetime context is detached from Connect's ctx,
	// which only bounds Connect; Close cancels it, which ends every
	// request, stream and reconnect wait.
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	return c, nil
}

// inbound is what Read returns next: a message, or a *StreamError. on is
// the request whose response stream carried msg (Streamable HTTP; the zero
// ID elsewhere and for the GET stream), for [OriginReader].
type inbound struct {
	msg jsonrpc.Message
	err error
	on  jsonrpc.ID
}

// reqStream is the response of one request in flight.
type reqStream struct {
	cancel context.CancelCauseFunc // cancels the POST and its stream
}

// httpConn is a Streamable HTTP connection. What both eras share lives
// here and in http_post.go (one POST exchange per message); what only the
// legacy era has (the session id, the GET stream, resumption and DELETE)
// is the legacy field and http_legacy.go.
type httpConn struct {
	url        string
	endpoint   *url.URL // url as http.NewRequest parses it; never modified
	client     *http.Client
	header     http.Header
	headerFunc func(context.Context, *http.Request) error
	tokens     TokenSource
	rht        time.Duration // < 0: none
	maxMsg     int
	log        *slog.Logger
	backoffs   [2]time.Duration // ReconnectBackoff, MaxReconnectBackoff (0: the defaults)

	// ctx is the connection lifetime (see Connect); cancel is called by
	// Close with errClosing, and only there: ctx.Done() is closed when
	// the connection is.
	ctx    context.Context
	cancel context.CancelCauseFunc

	// incoming carries messages and stream errors to Read. It is made,
	// with queued, by the first that needs them (readChans): a
	// connection closed before anything was read for it needs neither. It is
	// unbuffered: every producer is a tracked goroutine that also selects
	// on its context, so Close never leaves one blocked.
	incoming chan inbound
	// queue holds what Write read from JSON bodies itself, for Read; it
	// is served before incoming. queued (capacity 1) wakes a waiting Read
	// when queue becomes non-empty.
	qmu       sync.Mutex
	queue     []inbound // guarded by qmu
	queued    chan struct{}
	closeOnce sync.Once
	// woken: wake has been called (wakeReader).
	woken atomic.Bool
	// wg counts every goroutine the connection started; Add only under mu
	// while !closed, so that Close's Wait cannot race with an Add.
	wg sync.WaitGroup

	// initWait is the legacy notifications/initialized in flight that
	// every Write waits for first; nil when none (see initWait).
	initWait atomic.Pointer[initWait]
	// lingers: the server kept a response stream open after its
	// response (see drainStream); responses are handed on at once since.
	lingers atomic.Bool

	mu         sync.Mutex
	closed     bool // guarded by mu
	disableGET bool
	// finishing counts the response streams read to their end after their
	// response, which Close lets end (settle); finished, made with the
	// first, is signalled as each ends. Guarded by mu.
	finishing int32
	chansMade atomic.Bool // incoming and queued are made (readChans)
	finished  chan struct{}
	take      func(*jsonrpc.Response) bool // guarded by mu: the session's ResponseTaker hook; nil: none
	wake      func()                       // guarded by mu: the session's ReadWaker hook; nil: none
	version   string                       // guarded by mu
	era       negotiation.Era              // guarded by mu: negotiation.EraOf(version)
	streams   streamSet                    // guarded by mu: requests whose response is pending
	legacy    legacySession                // guarded by mu; zero in the modern era
}

var (
	_ Conn                  = (*httpConn)(nil)
	_ SessionIDer           = (*httpConn)(nil)
	_ ProtocolVersionSetter = (*httpConn)(nil)
	_ StreamCanceler        = (*httpConn)(nil)
	_ StreamReadyWaiter     = (*httpConn)(nil)
	_ StreamDeferrer        = (*httpConn)(nil)
	_ Kinder                = (*httpConn)(nil)
	_ OriginReader          = (*httpConn)(nil)
	_ ResponseTaker         = (*httpConn)(nil)
)

// TakeResponses implements [ResponseTaker].
func (c *httpConn) TakeResponses(take func(*jsonrpc.Response) bool) {
	c.mu.Lock()
	c.take = take
	c.mu.Unlock()
}

// WakeReader implements [ReadWaker]: wake runs before the first message
// or error is delivered or queued for Read, or at Close.
func (c *httpConn) WakeReader(wake func()) {
	c.mu.Lock()
	c.wake = wake
	c.mu.Unlock()
}

// wakeReader calls the ReadWaker hook, once, before anything reaches Read.
func (c *httpConn) wakeReader() {
	if c.woken.Load() || !c.woken.CompareAndSwap(false, true) {
		return
	}
	c.mu.Lock()
	wake := c.wake
	c.mu.Unlock()
	if wake != nil {
		wake()
	}
}

// taken offers msg, read on the answer to the request id, to the
// session's hook take (the exchange's copy of it), and reports whether
// the hook took it.
func taken(take func(*jsonrpc.Response) bool, msg jsonrpc.Message, id jsonrpc.ID) bool {
	r, ok := msg.(*jsonrpc.Response)
	return ok && take != nil && id.IsValid() && r.ID == id && take(r)
}

// Kind returns [KindHTTP].
func (c *httpConn) Kind() string { return KindHTTP }

// SetProtocolVersion selects the MCP-Protocol-Version header and the era,
// as package negotiation reads the version. Setting a legacy version may
// start the GET stream.
func (c *httpConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version, c.era = v, negotiation.EraOf(v)
	c.maybeStartGETLocked()
}

// CancelStream closes the response stream of request id (and abandons
// its POST if the headers have not arrived), in both eras; a legacy
// stream is then no longer resumed. No *StreamError is reported for it.
func (c *httpConn) CancelStream(id jsonrpc.ID) bool {
	c.mu.Lock()
	st := c.streams.remove(id, nil)
	c.mu.Unlock()
	if st == nil {
		return false
	}
	st.cancel(errStreamCanceled)
	return true
}

// Read returns the next message from any response stream or the GET
// stream. A [*StreamError] is per request: the connection stays usable and
// Read may be called again.
func (c *httpConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, _, err := c.ReadOrigin(ctx)
	return m, err
}

// ReadOrigin is Read that also returns the request whose POST response
// stream (or its legacy resumption) carried the message; the zero ID for
// the GET stream and with an error.
func (c *httpConn) ReadOrigin(ctx context.Context) (jsonrpc.Message, jsonrpc.ID, error) {
	incoming, queued := c.readChans()
	for {
		select {
		case <-c.ctx.Done():
			return nil, jsonrpc.ID{}, ErrClosed // what is queued is dropped with the connection
		default:
		}
		if in, ok := c.dequeue(); ok {
			return in.msg, in.on, in.err
		}
		select {
		case in := <-incoming:
			return in.msg, in.on, in.err
		default:
		}
		select {
		case in := <-incoming:
			return in.msg, in.on, in.err
		case <-queued:
		case <-c.ctx.Done():
			return nil, jsonrpc.ID{}, ErrClosed
		case <-ctx.Done():
			return nil, jsonrpc.ID{}, ctx.Err()
		}
	}
}

// readChans returns incoming and queued, made by the first caller; mu
// orders the making, and chansMade spares later calls the lock.
func (c *httpConn) readChans() (chan inbound, chan struct{}) {
	if !c.chansMade.Load() {
		c.mu.Lock()
		if !c.chansMade.Load() {
			c.incoming, c.queued = make(chan inbound), make(chan struct{}, 1)
			c.chansMade.Store(true)
		}
		c.mu.Unlock()
	}
	return c.incoming, c.queued
}

// readIncoming is readChans' incoming.
func (c *httpConn) readIncoming() chan inbound {
	in, _ := c.readChans()
	return in
}

// enqueue queues in for Read and wakes a waiting Read.
func (c *httpConn) enqueue(in inbound) {
	c.wakeReader()
	c.qmu.Lock()
	c.queue = append(c.queue, in)
	c.qmu.Unlock()
	c.signalQueued()
}

func (c *httpConn) signalQueued() {
	_, queued := c.readChans()
	select {
	case queued <- struct{}{}:
	default:
	}
}

// dequeue takes the oldest queued inbound, if any.
func (c *httpConn) dequeue() (inbound, bool) {
	c.qmu.Lock()
	defer c.qmu.Unlock()
	if len(c.queue) == 0 {
		return inbound{}, false
	}
	in := c.queue[0]
	n := copy(c.queue, c.queue[1:])
	c.queue[n] = inbound{}
	c.queue = c.queue[:n]
	if n > 0 {
		// Another Read may be waiting for the rest.
		c.signalQueued()
	}
	return in, true
}

// forget removes st from the pending requests, if it is still there.
func (c *httpConn) forget(id jsonrpc.ID, st *reqStream) {
	if st == nil {
		return
	}
	c.mu.Lock()
	c.streams.remove(id, st)
	c.mu.Unlock()
}

// spawn runs f on a tracked goroutine, unless the connection is closed.
func (c *httpConn) spawn(f func()) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		f()
	}()
	return true
}

// deliver hands in to Read, unless ctx ends first.
func (c *httpConn) deliver(ctx context.Context, in inbound) bool {
	c.wakeReader()
	select {
	case c.readIncoming() <- in:
		return true
	case <-ctx.Done():
		return false
	}
}

// Close ends the connection: it cancels every request and stream, ends a
// legacy session with DELETE (bounded by [DeleteTimeout]; 405 is fine),
// and joins every goroutine. It is idempotent and always returns nil.
//
// What is about to end by itself may end first, for at most 100ms in all:
// the legacy notifications/initialized in flight, and a response stream
// read to its end after its response: cancelled, their TCP connections
// would be torn down instead of going back to the pool, and the next
// connection would dial again.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		version, era, sid := c.version, c.era, c.legacy.sessionID
		c.mu.Unlock()
		c.settle()
		c.cancel(errClosing) // closes c.ctx.Done(): the connection's "closed" signal
		c.wakeReader()       // Read has ErrClosed for it now
		if sid != "" && era != negotiation.EraModern {
			c.deleteSession(version, sid)
		}
		c.wg.Wait()
	})
	return nil
}

// startFinishing notes a response stream that Close lets end by itself
// (see settle); endFinishing notes its end.
func (c *httpConn) startFinishing() {
	c.mu.Lock()
	if c.finished == nil {
		c.finished = make(chan struct{}, 1)
	}
	c.finishing++
	c.mu.Unlock()
}

func (c *httpConn) endFinishing() {
	c.mu.Lock()
	c.finishing--
	ch := c.finished
	c.mu.Unlock()
	select {
	case ch <- struct{}{}:
	default:
	}
}

// settle waits, for at most streamDrainWait, until the legacy
// notifications/initialized in flight has its answer and the finishing
// response streams have ended (see Close). It makes no timer when there
// is nothing to wait for.
func (c *httpConn) settle() {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		var ch <-chan struct{}
		if w := c.initWait.Load(); w != nil && !isClosed(w.answered) {
			ch = w.answered
		} else {
			c.mu.Lock()
			if c.finishing > 0 {
				ch = c.finished
			}
			c.mu.Unlock()
		}
		if ch == nil {
			return
		}
		if t == nil {
			t = time.NewTimer(streamDrainWait)
		}
		select {
		case <-ch:
		case <-t.C:
			return
		}
	}
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
