package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/conduitmcp/conduit/internal/jsonscan"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
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
//     [StreamCanceler.CancelStream] abandoned it; Close ends the session
//     with DELETE. [StreamReadyWaiter.WaitStreamReady] waits for the GET
//     stream to open.
//   - "" (not negotiated yet, e.g. initialize): no MCP-Protocol-Version.
type StreamableHTTP struct {
	// URL is the MCP endpoint.
	URL string
	// HTTPClient sends the requests. nil means a client of its own with no
	// overall Timeout and a transport with dial and TLS handshake timeouts
	// ([DefaultDialTimeout], [DefaultTLSHandshakeTimeout]). A given client
	// is copied and its CheckRedirect wrapped so that credentials never
	// follow a redirect to another origin. Its Timeout should be zero: it
	// would end long tool calls and event streams.
	HTTPClient *http.Client
	// Header holds static headers added to every request (they never
	// override the protocol headers). nil means none.
	Header http.Header
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
	client, own := newHTTPClient(t.HTTPClient, log)
	c := &httpConn{
		url:        u.String(),
		client:     client,
		own:        own,
		header:     t.Header.Clone(),
		headerFunc: t.HeaderFunc,
		tokens:     t.TokenSource,
		rht:        t.ResponseHeaderTimeout,
		maxMsg:     t.MaxMessageSize,
		log:        log,
		disableGET: t.DisableGETStream,
		incoming:   make(chan inbound),
		queued:     make(chan struct{}, 1),
		done:       make(chan struct{}),
		streams:    map[jsonrpc.ID]*reqStream{},
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

// Reconnect and retry pacing of GET streams.
const (
	// defaultReconnectDelay is the wait before reconnecting a stream that
	// ended cleanly when the server sent no retry field.
	defaultReconnectDelay = time.Second
	// minReconnectDelay keeps a server that closes at once with retry: 0
	// from making the client spin.
	minReconnectDelay = 50 * time.Millisecond
	// maxBackoff caps the wait after failures.
	maxBackoff = 30 * time.Second
	// maxGETFailures is how many consecutive failed GET attempts end a
	// stream for good.
	maxGETFailures = 5
)

// inbound is what Read returns next: a message, or a *StreamError.
type inbound struct {
	msg jsonrpc.Message
	err error
}

// reqStream is the response of one request in flight.
type reqStream struct {
	cancel context.CancelCauseFunc // cancels the POST and its stream
}

// httpConn is a Streamable HTTP connection.
type httpConn struct {
	url        string
	client     *http.Client
	own        *http.Transport // nil when the user supplied the client
	header     http.Header
	headerFunc func(context.Context, *http.Request) error
	tokens     TokenSource
	rht        time.Duration // < 0: none
	maxMsg     int
	log        *slog.Logger
	disableGET bool

	// ctx is the connection lifetime (see Connect); cancel is called by
	// Close with errClosing.
	ctx    context.Context
	cancel context.CancelCauseFunc

	// incoming carries messages and stream errors to Read. It is
	// unbuffered: every producer is a tracked goroutine that also selects
	// on its context, so Close never leaves one blocked.
	incoming chan inbound
	// queue holds what Write read from JSON bodies itself, for Read; it
	// is served before incoming. queued (capacity 1) wakes a waiting Read
	// when queue becomes non-empty.
	qmu    sync.Mutex
	queue  []inbound // guarded by qmu
	queued chan struct{}
	// done is closed by Close.
	done      chan struct{}
	closeOnce sync.Once
	// wg counts every goroutine the connection started; Add only under mu
	// while !closed, so that Close's Wait cannot race with an Add.
	wg sync.WaitGroup

	mu        sync.Mutex
	closed    bool                      // guarded by mu
	version   string                    // guarded by mu
	sessionID string                    // guarded by mu
	streams   map[jsonrpc.ID]*reqStream // guarded by mu: requests whose response is pending
	legacyOK  bool                      // guarded by mu: a POST succeeded in legacy mode
	getOn     bool                      // guarded by mu: the GET stream goroutine runs
	getDone   bool                      // guarded by mu: a GET stream ran and ended…
	getDoneID string                    // guarded by mu: …for this session id
	getReady  chan struct{}             // guarded by mu: closed when the current GET stream's first attempt answered (or ended); nil before any
}

var (
	_ Conn                  = (*httpConn)(nil)
	_ SessionIDer           = (*httpConn)(nil)
	_ ProtocolVersionSetter = (*httpConn)(nil)
	_ StreamCanceler        = (*httpConn)(nil)
	_ StreamReadyWaiter     = (*httpConn)(nil)
	_ Kinder                = (*httpConn)(nil)
)

// isModernVersion reports whether v is 2026-07-28 or later. Versions are
// YYYY-MM-DD dates, so they compare as strings.
func isModernVersion(v string) bool {
	return len(v) == len(protocol.Version20260728) && v >= protocol.Version20260728
}

func isLegacyVersion(v string) bool { return v != "" && !isModernVersion(v) }

// Kind returns [KindHTTP].
func (c *httpConn) Kind() string { return KindHTTP }

// SessionID returns the legacy session id, or "".
func (c *httpConn) SessionID() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SetProtocolVersion selects the era and the MCP-Protocol-Version header.
// Setting a legacy version may start the GET stream.
func (c *httpConn) SetProtocolVersion(v string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.version = v
	c.maybeStartGETLocked()
}

// WaitStreamReady waits until the legacy GET stream's first attempt has
// an answer (headers, a refusal such as 405, or a failure), ctx ends, or
// the connection closes. It returns nil at once when no GET stream was
// started (modern era, DisableGETStream, not initialized yet). See
// [StreamReadyWaiter].
func (c *httpConn) WaitStreamReady(ctx context.Context) error {
	c.mu.Lock()
	ready, legacy := c.getReady, isLegacyVersion(c.version)
	c.mu.Unlock()
	if ready == nil || !legacy {
		return nil
	}
	select {
	case <-ready:
		return nil
	case <-c.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// CancelStream closes the response stream of request id (and abandons
// its POST if the headers have not arrived), in both eras; a legacy
// stream is then no longer resumed. No *StreamError is reported for it.
func (c *httpConn) CancelStream(id jsonrpc.ID) bool {
	c.mu.Lock()
	st := c.streams[id]
	delete(c.streams, id)
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
	for {
		select {
		case <-c.done:
			return nil, ErrClosed // what is queued is dropped with the connection
		default:
		}
		if in, ok := c.dequeue(); ok {
			return in.msg, in.err
		}
		select {
		case in := <-c.incoming:
			return in.msg, in.err
		default:
		}
		select {
		case in := <-c.incoming:
			return in.msg, in.err
		case <-c.queued:
		case <-c.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// enqueue queues in for Read and wakes a waiting Read.
func (c *httpConn) enqueue(in inbound) {
	c.qmu.Lock()
	c.queue = append(c.queue, in)
	c.qmu.Unlock()
	c.signalQueued()
}

func (c *httpConn) signalQueued() {
	select {
	case c.queued <- struct{}{}:
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

// Write POSTs msg. A JSON response body is read before Write returns (ctx
// still bounds it); an event stream is read in the background once the
// response headers arrived. Either way the messages are delivered by
// Read. Errors: ctx.Err(); [ErrClosed];
// [*HTTPError] for a status outside 2xx, and for a request answered 2xx
// with neither JSON nor an event stream (202 included); [*NetworkError];
// an error matching [context.Canceled] when [StreamCanceler.CancelStream]
// abandoned the request before its headers arrived; the error of the
// TokenSource or HeaderFunc. msg is encoded into a body of the
// connection's own before the POST starts; neither msg nor its buffers
// are referenced after Write returns (the body may still be in flight).
func (c *httpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	var id jsonrpc.ID
	var method string
	var params json.RawMessage
	if r, ok := msg.(*jsonrpc.Request); ok {
		id, method, params = r.ID, r.Method, r.Params
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	version, sid := c.version, c.sessionID
	reqCtx, cancel := context.WithCancelCause(c.ctx)
	var st *reqStream
	if id.IsValid() {
		st = &reqStream{cancel: cancel}
		c.streams[id] = st
	}
	c.mu.Unlock()
	fail := func(err error) error {
		c.forget(id, st)
		cancel(nil)
		return err
	}

	req, err := http.NewRequestWithContext(reqCtx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return fail(err)
	}
	if err := c.prepare(ctx, req, version, sid); err != nil {
		return fail(err)
	}
	req.Header.Set("Content-Type", mediaJSON)
	req.Header.Set("Accept", acceptPOST)
	modern := isModernVersion(version)
	if modern && method != "" {
		req.Header.Set(protocol.HeaderMethod, method)
		if st != nil {
			if name, ok := nameHeader(method, params); ok {
				req.Header.Set(protocol.HeaderName, name)
			}
		}
	}
	for k, vs := range RequestHeaders(ctx) {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	if c.headerFunc != nil {
		if err := c.headerFunc(ctx, req); err != nil {
			return fail(err)
		}
	}

	// Until the body is handed to a stream goroutine, the caller's ctx
	// bounds the exchange; a request's headers are bounded by nothing
	// else, the other POSTs also by the response-header timeout.
	stop := context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	defer stop()
	var timer *time.Timer
	if st == nil && c.rht > 0 {
		timer = time.AfterFunc(c.rht, func() { cancel(headerTimeoutError{}) })
	}
	resp, err := c.client.Do(req)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		return fail(requestError(ctx, reqCtx, http.MethodPost, c.url, err))
	}
	if !modern {
		c.captureSession(resp)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		herr := newHTTPError(http.MethodPost, c.url, resp)
		if resp.StatusCode == http.StatusNotFound && sid != "" {
			herr.SessionExpired = true
			c.mu.Lock()
			if c.sessionID == sid {
				c.sessionID = ""
			}
			c.mu.Unlock()
		}
		return fail(herr)
	}
	if isLegacyVersion(version) {
		c.mu.Lock()
		c.legacyOK = true
		c.maybeStartGETLocked()
		c.mu.Unlock()
	}

	mt := mediaType(resp.Header.Get("Content-Type"))
	stream := mt == mediaEventStream
	if !stream && mt != mediaJSON || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		if st == nil {
			// A notification or response: any 2xx means accepted.
			drain(resp.Body)
			cancel(nil)
			return nil
		}
		return fail(newHTTPError(http.MethodPost, c.url, resp))
	}
	if !stream {
		return c.readJSON(ctx, reqCtx, cancel, resp, id, st)
	}
	if !stop() {
		// ctx ended just as the headers arrived; the request is cancelled.
		resp.Body.Close()
		return fail(ctx.Err())
	}
	if !c.spawn(func() { c.readResponse(reqCtx, cancel, resp, id, st, version) }) {
		resp.Body.Close()
		return fail(ErrClosed)
	}
	return nil
}

// prepare sets the headers every request of the connection carries.
func (c *httpConn) prepare(ctx context.Context, req *http.Request, version, sid string) error {
	if err := commonHeaders(ctx, req, c.header, c.tokens); err != nil {
		return err
	}
	if version != "" {
		req.Header.Set(protocol.HeaderProtocolVersion, version)
	}
	if sid != "" && !isModernVersion(version) {
		req.Header.Set(protocol.HeaderSessionID, sid)
	}
	return nil
}

// nameHeader returns the Mcp-Name value of a modern request, if the method
// has one.
func nameHeader(method string, params json.RawMessage) (string, bool) {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead,
		protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
	default:
		return "", false
	}
	// Scan the top-level members rather than decode params, with the
	// outcome of decoding them into struct{ Name, URI, TaskID *string }:
	// keys match case-insensitively, the last one wins, null unsets, and
	// any other non-string value of one of the three fails.
	params = bytes.TrimSpace(params)
	if len(params) == 0 || params[0] != '{' || !json.Valid(params) {
		return "", false
	}
	var name, uri, taskID []byte // raw string values; nil when absent
	bad := false
	jsonscan.EachMember(params, func(key, val []byte) bool {
		var dst *[]byte
		switch {
		case jsonscan.KeyIs(key, "name"):
			dst = &name
		case jsonscan.KeyIs(key, "uri"):
			dst = &uri
		case jsonscan.KeyIs(key, "taskId"):
			dst = &taskID
		default:
			return true
		}
		switch val[0] {
		case '"':
			*dst = val
		case 'n':
			*dst = nil
		default:
			bad = true
			return false
		}
		return true
	})
	if bad {
		return "", false
	}
	var raw []byte
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		raw = name
	case protocol.MethodResourcesRead:
		raw = uri
	default:
		raw = taskID
	}
	if raw == nil {
		return "", false
	}
	if c := raw[1 : len(raw)-1]; bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return encodeStringHeader(string(c)), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return encodeStringHeader(v), true
}

// captureSession remembers a legacy session id from any response that
// carries one (the spec sends it with the initialize response).
func (c *httpConn) captureSession(resp *http.Response) {
	s := resp.Header.Get(protocol.HeaderSessionID)
	if s == "" {
		return
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			c.log.Warn("transport: ignoring invalid session id", "url", c.url)
			return
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sessionID != s {
		c.sessionID = s
		c.maybeStartGETLocked()
	}
}

// forget removes st from the pending requests, if it is still there.
func (c *httpConn) forget(id jsonrpc.ID, st *reqStream) {
	if st == nil {
		return
	}
	c.mu.Lock()
	if c.streams[id] == st {
		delete(c.streams, id)
	}
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
	select {
	case c.incoming <- in:
		return true
	case <-ctx.Done():
		return false
	}
}

// readJSON reads the JSON message body of a 2xx POST answer on Write's
// goroutine, bounded by Write's ctx (whose end cancels reqCtx), and queues
// the message for Read; for a request whose response is not in the body
// it queues a *StreamError instead. It returns ctx.Err() when ctx ended
// before the body was read; a request abandoned by CancelStream or Close
// meanwhile reports nothing, as a stream does.
func (c *httpConn) readJSON(ctx, reqCtx context.Context, cancel context.CancelCauseFunc, resp *http.Response, id jsonrpc.ID, st *reqStream) error {
	defer cancel(nil)
	defer c.forget(id, st)
	data, err := readLimited(resp.Body, c.maxMsg)
	resp.Body.Close()
	if reqCtx.Err() != nil {
		return ctx.Err()
	}
	var msg jsonrpc.Message
	if err == nil && (id.IsValid() || len(bytes.TrimSpace(data)) > 0) {
		msg, err = jsonrpc.DecodeMessage(data)
	}
	if msg != nil {
		c.enqueue(inbound{msg: msg})
	}
	if r, ok := msg.(*jsonrpc.Response); ok && r.ID == id || !id.IsValid() {
		if err != nil {
			c.log.Warn("transport: reading response body", "url", c.url, "err", err)
		}
		return nil
	}
	c.enqueue(inbound{err: &StreamError{ID: id, Err: err}})
	return nil
}

// readResponse reads the event stream of a 2xx POST answer on its own
// goroutine and delivers what it holds. For a request whose response never
// came it delivers a *StreamError, after trying to resume a legacy stream
// that had event ids.
func (c *httpConn) readResponse(ctx context.Context, cancel context.CancelCauseFunc, resp *http.Response, id jsonrpc.ID, st *reqStream, version string) {
	defer cancel(nil)
	defer c.forget(id, st)
	res := c.consume(ctx, resp.Body, id)
	resp.Body.Close()
	if res.got || ctx.Err() != nil || !id.IsValid() {
		if res.err != nil && ctx.Err() == nil {
			c.log.Warn("transport: reading response body", "url", c.url, "err", res.err)
		}
		return
	}
	if res.lastID != "" && isLegacyVersion(version) {
		var err error
		res.got, err = c.getLoop(ctx, id, res.lastID, res.retry)
		if res.got || ctx.Err() != nil {
			return
		}
		if err != nil {
			res.err = err
		}
	}
	c.deliver(ctx, inbound{err: &StreamError{ID: id, Err: res.err}})
}

// streamResult is what reading one body yielded.
type streamResult struct {
	got    bool          // the response to the wanted id was delivered
	events int           // events seen, priming events included
	lastID string        // last event id seen
	retry  time.Duration // last retry field
	err    error         // read error; nil for a clean end
}

// consume reads an event stream and delivers its messages in order. It
// stops after delivering the response to want (if valid).
func (c *httpConn) consume(ctx context.Context, body io.Reader, want jsonrpc.ID) streamResult {
	var res streamResult
	res.retry, res.err = readEvents(body, c.maxMsg, func(ev event) bool {
		res.events++
		if ev.LastID != "" {
			res.lastID = ev.LastID
		}
		msg := decodeEvent(ev)
		if msg == nil {
			switch {
			case ev.Data == "": // a priming event
			case ev.Type == "" || ev.Type == "message":
				c.log.Warn("transport: ignoring an event that is not a JSON-RPC message", "url", c.url)
			default:
				c.log.Debug("transport: ignoring event", "type", ev.Type, "url", c.url)
			}
			return true
		}
		if !c.deliver(ctx, inbound{msg: msg}) {
			return false
		}
		if r, ok := msg.(*jsonrpc.Response); ok && want.IsValid() && r.ID == want {
			res.got = true
			return false
		}
		return true
	})
	return res
}

// maybeStartGETLocked starts the legacy GET stream when it is wanted: a
// legacy version is set, the server gave a session id or accepted a POST,
// and no stream runs or already ended for this session.
func (c *httpConn) maybeStartGETLocked() {
	if c.closed || c.disableGET || c.getOn || !isLegacyVersion(c.version) ||
		c.sessionID == "" && !c.legacyOK || c.getDone && c.getDoneID == c.sessionID {
		return
	}
	c.getOn = true
	sid := c.sessionID
	ready := make(chan struct{})
	c.getReady = ready
	var readyOnce sync.Once
	signal := func() { readyOnce.Do(func() { close(ready) }) }
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer signal()
		_, err := c.getLoopNotify(c.ctx, jsonrpc.ID{}, "", 0, signal)
		var he *HTTPError
		switch {
		case c.ctx.Err() != nil:
		case errors.As(err, &he) && he.StatusCode == http.StatusMethodNotAllowed:
			c.log.Debug("transport: server offers no GET stream", "url", c.url)
		default:
			c.log.Warn("transport: GET stream ended", "url", c.url, "err", err)
		}
		c.mu.Lock()
		c.getOn, c.getDone, c.getDoneID = false, true, sid
		c.mu.Unlock()
	}()
}

// getLoop runs GET streams, reconnecting with Last-Event-ID, until ctx
// ends, the response to want (if valid) has been delivered, or the server
// refuses for good (405, 4xx) or fails maxGETFailures times in a row. The
// wait before a reconnect honours the server's retry field; failures back
// off exponentially (and honour Retry-After).
func (c *httpConn) getLoop(ctx context.Context, want jsonrpc.ID, lastID string, retry time.Duration) (bool, error) {
	return c.getLoopNotify(ctx, want, lastID, retry, nil)
}

// getLoopNotify is getLoop that also calls opened (when not nil) once the
// first GET attempt has an answer: response headers, a refusal or a
// failure.
func (c *httpConn) getLoopNotify(ctx context.Context, want jsonrpc.ID, lastID string, retry time.Duration, opened func()) (bool, error) {
	failures := 0
	delay := time.Duration(0)
	if lastID != "" {
		delay = max(retry, minReconnectDelay)
	}
	for {
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return false, ctx.Err()
			}
		}
		resp, cancel, err := c.openGET(ctx, lastID)
		if opened != nil {
			opened()
			opened = nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			var he *HTTPError
			if errors.As(err, &he) && !he.Retryable() {
				return false, err
			}
			failures++
			if failures >= maxGETFailures {
				return false, err
			}
			delay = backoff(failures)
			if he != nil && he.RetryAfter > delay {
				delay = min(he.RetryAfter, maxBackoff)
			}
			continue
		}
		res := c.consume(ctx, resp.Body, want)
		resp.Body.Close()
		cancel(nil)
		if res.got {
			return true, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if res.lastID != "" {
			lastID = res.lastID
		}
		if res.events > 0 && res.err == nil {
			failures = 0
		} else {
			failures++
			if failures >= maxGETFailures {
				if res.err == nil {
					res.err = errors.New("event stream ended without events")
				}
				return false, res.err
			}
		}
		delay = defaultReconnectDelay
		if res.retry > 0 {
			delay = res.retry
		}
		delay = max(delay, minReconnectDelay)
		if failures > 0 {
			delay = max(delay, backoff(failures))
		}
	}
}

// backoff is the wait after n consecutive failures: 1s, 2s, 4s … capped.
func backoff(n int) time.Duration {
	d := time.Second << min(n-1, 5)
	return min(d, maxBackoff)
}

// openGET opens one GET stream. On success the caller must close the body
// and call cancel.
func (c *httpConn) openGET(ctx context.Context, lastID string) (*http.Response, context.CancelCauseFunc, error) {
	c.mu.Lock()
	version, sid := c.version, c.sessionID
	c.mu.Unlock()
	reqCtx, cancel := context.WithCancelCause(ctx)
	req, err := http.NewRequestWithContext(reqCtx, http.MethodGet, c.url, nil)
	if err != nil {
		cancel(nil)
		return nil, nil, err
	}
	if err := c.prepare(reqCtx, req, version, sid); err != nil {
		cancel(nil)
		return nil, nil, err
	}
	req.Header.Set("Accept", mediaEventStream)
	if lastID != "" {
		req.Header.Set(protocol.HeaderLastEventID, lastID)
	}
	if c.headerFunc != nil {
		if err := c.headerFunc(reqCtx, req); err != nil {
			cancel(nil)
			return nil, nil, err
		}
	}
	var timer *time.Timer
	if c.rht > 0 {
		timer = time.AfterFunc(c.rht, func() { cancel(headerTimeoutError{}) })
	}
	resp, err := c.client.Do(req)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		err = requestError(ctx, reqCtx, http.MethodGet, c.url, err)
		cancel(nil)
		return nil, nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || mediaType(resp.Header.Get("Content-Type")) != mediaEventStream {
		herr := newHTTPError(http.MethodGet, c.url, resp)
		herr.SessionExpired = resp.StatusCode == http.StatusNotFound && sid != ""
		cancel(nil)
		return nil, nil, herr
	}
	return resp, cancel, nil
}

// Close ends the connection: it cancels every request and stream, ends a
// legacy session with DELETE (bounded by [DeleteTimeout]; 405 is fine),
// and joins every goroutine. It is idempotent and always returns nil.
func (c *httpConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		version, sid := c.version, c.sessionID
		c.mu.Unlock()
		c.cancel(errClosing)
		close(c.done)
		if sid != "" && !isModernVersion(version) {
			c.deleteSession(version, sid)
		}
		c.wg.Wait()
		if c.own != nil {
			c.own.CloseIdleConnections()
		}
	})
	return nil
}

// deleteSession sends DELETE with the session id, bounded by
// DeleteTimeout.
func (c *httpConn) deleteSession(version, sid string) {
	ctx, cancel := context.WithTimeout(context.Background(), DeleteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	if err := c.prepare(ctx, req, version, sid); err != nil {
		c.log.Warn("transport: preparing DELETE", "url", c.url, "err", err)
		return
	}
	if c.headerFunc != nil {
		if err := c.headerFunc(ctx, req); err != nil {
			return
		}
	}
	resp, err := c.client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		c.log.Warn("transport: ending session", "url", c.url, "err", err)
		return
	}
	drain(resp.Body)
	if resp.StatusCode != http.StatusMethodNotAllowed && (resp.StatusCode < 200 || resp.StatusCode > 299) {
		c.log.Warn("transport: ending session", "url", c.url, "status", resp.StatusCode)
	}
}
