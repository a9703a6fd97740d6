package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// SSE is the deprecated HTTP+SSE transport of protocol version 2024-11-05:
// a GET event stream whose first event, "endpoint", names the URL that
// messages are POSTed to; the server's messages arrive as "message" events
// on the stream. Its zero value, with URL set, works.
type SSE struct {
	// URL is the event stream endpoint.
	URL string
	// HTTPClient sends the requests; nil means one over [DefaultPool],
	// the shared pool (see [StreamableHTTP.HTTPClient]).
	HTTPClient *http.Client
	// CrossOriginRedirects follows redirects to another origin without
	// body, credentials and custom headers; by default they fail with a
	// [*RedirectError]. See [StreamableHTTP.CrossOriginRedirects].
	CrossOriginRedirects bool
	// Header holds static headers added to every request.
	Header http.Header
	// SensitiveHeaders names the headers of Header that are credentials;
	// see [StreamableHTTP.SensitiveHeaders].
	SensitiveHeaders []string
	// HeaderFunc, when set, is called last for every request and may
	// change its headers; an error aborts the request.
	HeaderFunc func(ctx context.Context, req *http.Request) error
	// TokenSource, when set, supplies the bearer token of every request.
	TokenSource TokenSource
	// Logger receives diagnostics. nil discards them.
	Logger *slog.Logger
	// MaxMessageSize limits one event, in bytes; 0 or negative means
	// [DefaultMaxMessageSize].
	MaxMessageSize int
}

var _ Transport = (*SSE)(nil)

// Connect opens the event stream and waits, bounded by ctx, for the
// endpoint event. The endpoint is resolved against URL and must have the
// same origin. Errors: ctx.Err(); [*HTTPError] when the GET is refused or
// is not an event stream; [*NetworkError]; an error matching [ErrClosed]
// when the stream ends before the endpoint event; an error for an
// endpoint of another origin.
func (t *SSE) Connect(ctx context.Context) (Conn, error) {
	base, err := parseEndpoint(t.URL)
	if err != nil {
		return nil, err
	}
	log := discardLogger(t.Logger)
	c := &sseConn{
		url:        base.String(),
		client:     newHTTPClient(t.HTTPClient, t.CrossOriginRedirects, t.Header, log),
		header:     t.Header.Clone(),
		headerFunc: t.HeaderFunc,
		tokens:     t.TokenSource,
		maxMsg:     t.MaxMessageSize,
		log:        log,
		incoming:   make(chan inbound),
		queued:     make(chan struct{}, 1),
		done:       make(chan struct{}),
		ended:      make(chan struct{}),
	}
	if c.maxMsg <= 0 {
		c.maxMsg = DefaultMaxMessageSize
	}
	// The stream lives as long as the connection, not as long as ctx,
	// which bounds only Connect (see the AfterFunc below). Close cancels it.
	c.ctx, c.cancel = context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { c.cancel(ctx.Err()) })
	defer stop()

	req, err := http.NewRequestWithContext(c.ctx, http.MethodGet, c.url, nil)
	if err != nil {
		c.cancel(nil)
		return nil, err
	}
	if err := c.prepare(ctx, req); err != nil {
		c.cancel(nil)
		return nil, err
	}
	req.Header.Set("Accept", mediaEventStream)
	if req, err = applyHook(ctx, req, c.headerFunc); err != nil {
		c.cancel(nil)
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		err = requestError(ctx, c.ctx, http.MethodGet, c.url, err)
		c.shutdown()
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 || mediaType(resp.Header.Get("Content-Type")) != mediaEventStream {
		herr := newHTTPError(http.MethodGet, c.url, resp)
		c.shutdown()
		return nil, herr
	}
	endpoint := make(chan string, 1)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		c.readLoop(resp, endpoint)
	}()

	ep, err := c.awaitEndpoint(ctx, stop, endpoint)
	if err != nil {
		c.shutdown()
		return nil, err
	}
	if c.endpoint, err = resolveEndpoint(base, ep); err != nil {
		c.shutdown()
		return nil, err
	}
	c.postURL = c.endpoint.String()
	if c.post, err = endpointOf(nil, "", c.postURL); err != nil {
		c.shutdown()
		return nil, err
	}
	return c, nil
}

// awaitEndpoint waits for the endpoint event, bounded by ctx; stop
// detaches ctx from the connection once it came.
func (c *sseConn) awaitEndpoint(ctx context.Context, stop func() bool, endpoint <-chan string) (string, error) {
	var ep string
	select {
	case ep = <-endpoint:
	case <-c.ended:
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", c.endErr
	}
	if !stop() {
		return "", ctx.Err()
	}
	return ep, nil
}

// resolveEndpoint resolves the endpoint event's data against base; it must
// keep base's origin.
func resolveEndpoint(base *url.URL, ep string) (*url.URL, error) {
	ref, err := url.Parse(strings.TrimSpace(ep))
	if err != nil {
		return nil, fmt.Errorf("transport: invalid endpoint %q: %v", ep, err)
	}
	u := base.ResolveReference(ref)
	if !sameOrigin(u, base) {
		return nil, fmt.Errorf("transport: endpoint %q is not on the origin of %s", ep, base.String())
	}
	return u, nil
}

// sseConn is an HTTP+SSE connection.
type sseConn struct {
	url        string
	endpoint   *url.URL // written once by Connect before it returns, as are:
	postURL    string   // endpoint's string, where messages are POSTed
	post       *url.URL // postURL as http.NewRequest parses it; never modified
	client     *http.Client
	header     http.Header
	headerFunc func(context.Context, *http.Request) error
	tokens     TokenSource
	maxMsg     int
	log        *slog.Logger

	// ctx is the connection lifetime; cancel is called by Close.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// incoming carries the stream's messages, and the non-terminal
	// errors of broken answers, to Read, unbuffered.
	incoming chan inbound
	// mu guards queue and answered.
	mu sync.Mutex
	// queue holds, for Read, the messages a server put in the body of a
	// POST's answer (where the 2024-11-05 transport expects none); queued
	// (1-buffered) signals that it is not empty.
	queue  []inbound
	queued chan struct{}
	// answered remembers the ids of the last responses handed to Read, so
	// that a response that came both in a POST's body and on the stream
	// is delivered once.
	answered recentIDs
	// ended is closed by the reader goroutine when the stream ends, after
	// endErr is written.
	ended  chan struct{}
	endErr error
	// done is closed by Close.
	done      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup // the reader goroutine
}

var (
	_ Conn   = (*sseConn)(nil)
	_ Kinder = (*sseConn)(nil)
)

// Kind returns [KindSSE].
func (c *sseConn) Kind() string { return KindSSE }

func (c *sseConn) prepare(ctx context.Context, req *http.Request) error {
	return commonHeaders(ctx, req, c.header, c.tokens)
}

// readLoop reads the event stream: the first endpoint event goes to
// endpoint, message events to Read.
func (c *sseConn) readLoop(resp *http.Response, endpoint chan<- string) {
	defer close(c.ended)
	defer resp.Body.Close()
	sent := false
	_, err := readEvents(resp.Body, c.maxMsg, func(ev event) bool {
		if ev.Type == "endpoint" {
			if !sent {
				sent = true
				endpoint <- string(ev.Data) // buffered; sent once
			}
			return true
		}
		if !sent {
			c.log.Warn("transport: event before the endpoint event ignored", "type", ev.Type)
			return true
		}
		if isBatchEvent(ev) {
			for _, in := range batchInbound(ev.Data, c.log, c.url) {
				if in.msg != nil && !c.first(in.msg) {
					continue
				}
				select {
				case c.incoming <- in:
				case <-c.ctx.Done():
					return false
				}
			}
			return true
		}
		msg, broken := decodeEventAnswer(ev)
		in := inbound{msg: msg}
		switch {
		case broken != nil:
			in = inbound{err: broken}
		case msg == nil:
			if len(ev.Data) > 0 {
				c.log.Debug("transport: ignoring event", "type", ev.Type, "url", c.url)
			}
			return true
		case !c.first(msg):
			c.log.Debug("transport: dropping a response already delivered from a POST's body", "url", c.url)
			return true
		}
		select {
		case c.incoming <- in:
			return true
		case <-c.ctx.Done():
			return false
		}
	})
	switch {
	case c.ctx.Err() != nil && errors.Is(context.Cause(c.ctx), errClosing):
		c.endErr = ErrClosed
	case err != nil:
		c.endErr = fmt.Errorf("%w: %w", ErrClosed, &NetworkError{Op: "reading event stream", URL: c.url, Err: err})
	default:
		c.endErr = fmt.Errorf("%w: the server ended the event stream", ErrClosed)
	}
}

// Read returns the next message of the event stream or of a POST's
// answer body (see Write), or the non-terminal [*jsonrpc.DecodeError] of
// a broken answer (see [Conn]). After the stream ended, and the messages
// of answer bodies were read, it returns an error matching [ErrClosed]
// (wrapping a [*NetworkError] if the stream broke).
func (c *sseConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
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
		case <-c.ended:
			if in, ok := c.dequeue(); ok {
				return in.msg, in.err
			}
			return nil, c.endErr
		case <-c.done:
			return nil, ErrClosed
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// dequeue takes the oldest message of an answer body, if any.
func (c *sseConn) dequeue() (inbound, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		return inbound{}, false
	}
	in := c.queue[0]
	c.queue[0] = inbound{}
	c.queue = c.queue[1:]
	if len(c.queue) > 0 {
		c.signalQueued() // another Read may be waiting for the rest
	}
	return in, true
}

func (c *sseConn) signalQueued() {
	select {
	case c.queued <- struct{}{}:
	default:
	}
}

// first reports whether msg is to be delivered: false for a response
// whose id was among the last ones delivered, from the stream or a body.
func (c *sseConn) first(msg jsonrpc.Message) bool {
	r, ok := msg.(*jsonrpc.Response)
	if !ok || !r.ID.IsValid() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.answered.add(r.ID)
}

// readBody queues for Read the messages of a 2xx POST answer's JSON body.
// The 2024-11-05 transport sends every server message on the stream, but
// some servers answer the POST with the response itself: delivered here
// (once, see first), the call it answers need not wait for its deadline.
// A body that holds no JSON-RPC message is logged and dropped.
func (c *sseConn) readBody(resp *http.Response) {
	data, err := readLimited(resp.Body, c.maxMsg, resp.ContentLength)
	resp.Body.Close()
	if err != nil {
		c.log.Warn("transport: reading a POST's answer body", "url", c.postURL, "err", err)
		return
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return
	}
	var ins []inbound
	if jsonrpc.IsBatch(data) {
		ins = batchInbound(data, c.log, c.postURL)
	} else if msg, err := jsonrpc.DecodeMessageOwned(data); err != nil {
		c.log.Warn("transport: a POST's answer body is not a JSON-RPC message", "url", c.postURL, "err", err)
	} else {
		ins = []inbound{{msg: msg}}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.queue)
	for _, in := range ins {
		if r, ok := in.msg.(*jsonrpc.Response); ok && r.ID.IsValid() && !c.answered.add(r.ID) {
			continue // the stream delivered it already
		}
		c.queue = append(c.queue, in)
	}
	if len(c.queue) > n {
		c.signalQueued()
	}
}

// recentIDs is a set of the last maxRecentIDs response ids added to it.
// Its zero value is empty.
type recentIDs struct {
	set   map[jsonrpc.ID]struct{}
	order []jsonrpc.ID // a ring of the ids in set, oldest at next
	next  int
}

// maxRecentIDs bounds recentIDs: a response whose copy comes after this
// many other responses is delivered twice (the engine drops the second
// copy of an answered call) rather than remembered without bound.
const maxRecentIDs = 1024

// add adds id and reports whether it was absent.
func (s *recentIDs) add(id jsonrpc.ID) bool {
	if _, ok := s.set[id]; ok {
		return false
	}
	if s.set == nil {
		s.set = make(map[jsonrpc.ID]struct{})
	}
	if len(s.order) < maxRecentIDs {
		s.order = append(s.order, id)
	} else {
		delete(s.set, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % maxRecentIDs
	}
	s.set[id] = struct{}{}
	return true
}

// Write POSTs msg to the endpoint; any 2xx (202 expected) is success.
// A JSON body of a 2xx answer, which the 2024-11-05 transport does not
// expect, is read, and the messages it holds are delivered by Read; a
// response delivered both there and on the stream is delivered once.
// Errors: ctx.Err() (wrapped as in [StreamableHTTP]'s Write when the POST
// had not begun to send its body); [ErrClosed] (also once the event stream ended, and
// for a POST the close stopped before its body was sent); [*HTTPError];
// [*NetworkError] (with Unsent set when the POST failed before its body
// was sent).
func (c *sseConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	select {
	case <-c.ended:
		return &endedError{end: c.endErr} // the server is gone with its stream: nothing sent
	default:
	}
	if c.ctx.Err() != nil {
		return ErrClosed
	}
	reqCtx, cancel := context.WithCancelCause(c.ctx)
	defer cancel(nil)
	stop := context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	defer stop()
	if err := ctx.Err(); err != nil {
		return err // ended before the watch was set: sent, it could outrun the watch
	}
	ep := c.postURL
	req, pb, err := newPostRequest(reqCtx, c.client, c.post, body)
	if err != nil {
		return err
	}
	if err := c.prepare(ctx, req); err != nil {
		return err
	}
	req.Header.Set("Content-Type", mediaJSON)
	req, err = applyHook(ctx, req, c.headerFunc)
	if err != nil {
		return err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return postFailed(ctx, reqCtx, ep, req, pb, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return newHTTPError(http.MethodPost, ep, resp)
	}
	if mediaType(resp.Header.Get("Content-Type")) != mediaJSON || resp.StatusCode == http.StatusNoContent {
		drain(resp.Body)
		return nil
	}
	c.readBody(resp)
	return nil
}

// shutdown cancels the stream and joins the reader (Connect's failure
// path and Close).
func (c *sseConn) shutdown() {
	c.cancel(errClosing)
	c.wg.Wait()
}

// Close ends the event stream and joins the reader goroutine. It is
// idempotent and returns nil.
func (c *sseConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.done)
		c.shutdown()
	})
	return nil
}
