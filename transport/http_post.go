package transport

import (
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// One POST exchange per message, in both eras; what differs by era is
// asked of the exchange's era (snapshotted when it starts).

// exchange is one POST in flight.
type exchange struct {
	id      jsonrpc.ID // valid for a request
	method  string
	params  []byte
	version string
	era     negotiation.Era
	sid     string     // legacy session id sent with it
	st      *reqStream // registered for a request; nil otherwise
	take    func(*jsonrpc.Response) bool
	body    *postBody // the POST's, once built
	ctx     context.Context
	cancel  context.CancelCauseFunc
}

// Write POSTs msg. A JSON response body is read before Write returns (ctx
// still bounds it); an event stream is read in the background once the
// response headers arrived, and the response it carries is delivered once
// the server has ended the stream (as it should after the response: the
// TCP connection is then back in the pool for the next request), or at
// once on a connection whose server was seen to keep a stream open past
// the drain's bound. Either way the messages are delivered by Read (or
// the ResponseTaker hook). Errors: ctx.Err() (wrapped in a
// [*NetworkError] with Unsent set when ctx ended the POST before its body
// was sent); [ErrClosed];
// [*HTTPError] for a status outside 2xx, and for a request answered 2xx
// with neither JSON nor an event stream (202 included); [*NetworkError]
// (with Unsent set when the POST failed before its body was sent: a
// connection closed meanwhile is then ErrClosed alone);
// an error matching [context.Canceled] when [StreamCanceler.CancelStream]
// abandoned the request before its headers arrived; the error of the
// TokenSource or HeaderFunc. msg is encoded into a body of the
// connection's own before the POST starts; neither msg nor its buffers
// are referenced after Write returns (the body may still be in flight).
//
// A legacy notifications/initialized, the handshake's last message, is
// the exception: its Write waits for the answer as any other, but fails
// only when ctx ended or the connection closed; after any other failure
// it returns nil, and the next Write sends the notification again before
// its own message, so that the server has it before anything else (see
// initWait). When it fails again when sent anew, that Write sends nothing
// and fails with an error matching ErrClosed that wraps no
// [*NetworkError] or [*HTTPError] (the session must be initialized anew;
// the message never left).
func (c *httpConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := c.awaitInitialized(ctx); err != nil {
		return err
	}
	return c.write(ctx, msg, true)
}

// write is Write after the wait for notifications/initialized; mayDefer
// lets a failure of that notification's POST be kept for the next Write
// (sendInitialized) instead of failing this one.
func (c *httpConn) write(ctx context.Context, msg jsonrpc.Message, mayDefer bool) error {
	if err := ctx.Err(); err != nil {
		// An ended context sends nothing (its watch below would cancel
		// the POST from a goroutine of its own, which the POST could
		// outrun).
		return err
	}
	body, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	var xv exchange // on the stack: no closure captures it
	x := &xv
	if err := c.begin(x, msg); err != nil {
		return err
	}
	req, err := c.newPOST(ctx, x, body)
	if err != nil {
		return c.abandon(x, err)
	}
	if mayDefer && x.st == nil && x.era == negotiation.EraLegacy && x.method == protocol.NotificationInitialized {
		return c.sendInitialized(ctx, x, req, body)
	}
	return c.post(ctx, x, req)
}

// post sends req, the POST of exchange x, and reads its answer.
func (c *httpConn) post(ctx context.Context, x *exchange, req *http.Request) error {
	// Until the body is handed to a stream goroutine, the caller's ctx
	// bounds the exchange; a request's headers are bounded by nothing
	// else, the other POSTs also by the response-header timeout.
	cancel := x.cancel
	stop := noWatch // a ctx that cannot end needs no watch
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, func() { cancel(ctx.Err()) })
	}
	defer stop()
	var timer *time.Timer
	if x.st == nil && c.rht > 0 {
		timer = time.AfterFunc(c.rht, func() { cancel(headerTimeoutError{}) })
	}
	resp, err := c.client.Do(req)
	if timer != nil {
		timer.Stop()
	}
	if err != nil {
		return c.abandon(x, postFailed(ctx, x.ctx, c.url, req, x.body, err))
	}
	return c.answer(ctx, x, resp, stop)
}

// closedInFlight is the cause of a [*NetworkError] for a POST whose
// connection was closed while it was in flight. It matches [ErrClosed].
type closedInFlight struct{}

func (closedInFlight) Error() string {
	return "transport: connection closed while the request was in flight"
}

func (closedInFlight) Is(target error) bool { return target == ErrClosed }

// inFlight is the error of a POST that failed once its body was being
// sent (see postFailed), or whose answer arrived as Close began (see
// answer): a connection closed meanwhile (ErrClosed) may have written the
// request, so the server may have it. That is a [*NetworkError] (a
// request that may have been delivered) which still matches ErrClosed,
// not ErrClosed alone (a request that was not written).
func inFlight(op, url string, err error) error {
	if err == ErrClosed {
		return &NetworkError{Op: op, URL: url, Err: closedInFlight{}}
	}
	return err
}

// noWatch is the stop function of a context that cannot end: like the
// stop of context.AfterFunc before the function ran, it reports true.
func noWatch() bool { return true }

// initWait is a legacy notifications/initialized whose POST failed, or
// is in flight, kept so that every later Write waits for its answer and,
// when that was a failure, sends it again first. The server must have it
// before anything else the client sends (2025-11-25 basic/lifecycle), and
// over HTTP each POST is its own exchange, which a server may handle in
// any order. When sending it again fails too, that Write fails with
// initFailedError (its message was not sent); a session that expired
// meanwhile fails that Write with the expiry.
type initWait struct {
	answered chan struct{} // closed once the POST has its answer
	err      error         // the POST's failure; written before answered closes
	body     []byte        // the notification, to send again after a failure
	mu       sync.Mutex    // serializes the writers that send it again
}

// sendInitialized sends the POST req of notifications/initialized
// (exchange x, encoded as body) and waits for its answer, bounded by ctx,
// the response-header timeout and the connection's life. Only the end of
// ctx or of the connection fails the Write: any other failure (a refusal,
// a broken TCP connection, the header timeout) is kept, and the next
// Write sends the notification again before its own message
// (awaitInitialized), as the handshake needs nothing back from it.
func (c *httpConn) sendInitialized(ctx context.Context, x *exchange, req *http.Request, body []byte) error {
	w := &initWait{answered: make(chan struct{}), body: body}
	c.initWait.Store(w)
	w.err = c.post(ctx, x, req)
	close(w.answered)
	switch {
	case w.err == nil:
		c.initWait.CompareAndSwap(w, nil)
		return nil
	case ctx.Err() != nil || c.ctx.Err() != nil:
		return w.err // the Write's context ended, or the connection closed
	}
	c.log.Warn("transport: notifications/initialized failed; sending it again before the next message", "url", c.url, "err", w.err)
	return nil
}

// awaitInitialized waits, before a Write, for the answer to a legacy
// notifications/initialized still in flight (see initWait), and sends it
// again when that answer was a failure. It costs one atomic load
// otherwise.
func (c *httpConn) awaitInitialized(ctx context.Context) error {
	w := c.initWait.Load()
	if w == nil {
		return nil
	}
	select {
	case <-w.answered:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		return ErrClosed
	}
	if w.err == nil {
		c.initWait.CompareAndSwap(w, nil)
		return nil
	}
	if he, ok := errors.AsType[*HTTPError](w.err); ok && he.SessionExpired {
		// The session ended before it was initialized: this Write
		// fails as it would have, and the caller starts a new session.
		c.initWait.CompareAndSwap(w, nil)
		return w.err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if c.initWait.Load() != w {
		return nil // another Write sent it again meanwhile
	}
	msg, err := jsonrpc.DecodeMessage(w.body)
	if err != nil {
		return err // our own encoding: cannot happen
	}
	if err := c.write(ctx, msg, false); err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrClosed) && !isNetworkError(err) {
			return err
		}
		return &initFailedError{err: err}
	}
	c.initWait.CompareAndSwap(w, nil)
	return nil
}

// initFailedError is the error of a Write that sent nothing because the
// legacy notifications/initialized that had to go first failed again. It
// matches [ErrClosed], as the Write of a connection whose session must be
// initialized anew, and wraps nothing that says a message may have been
// delivered: the initialized failure is in its text only.
type initFailedError struct{ err error }

func (e *initFailedError) Error() string {
	return "transport: not sent: notifications/initialized, which must go first, failed: " + strings.TrimPrefix(e.err.Error(), "transport: ")
}

func (e *initFailedError) Is(target error) bool { return target == ErrClosed }

func isNetworkError(err error) bool {
	_, ok := errors.AsType[*NetworkError](err)
	return ok
}

// begin fills x for msg with a snapshot of the connection's era and
// session, and registers the stream of a request.
func (c *httpConn) begin(x *exchange, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok {
		x.id, x.method, x.params = r.ID, r.Method, r.Params
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	x.version, x.era, x.sid, x.take = c.version, c.era, c.legacy.sessionID, c.take
	x.ctx, x.cancel = context.WithCancelCause(c.ctx)
	if x.id.IsValid() {
		x.st = &reqStream{cancel: x.cancel}
		c.streams.put(x.id, x.st)
	}
	return nil
}

// abandon ends exchange x before its answer is handed on, and returns err.
func (c *httpConn) abandon(x *exchange, err error) error {
	c.forget(x.id, x.st)
	x.cancel(nil)
	return err
}

// newPOST builds the POST of x: the connection's headers, the era's
// protocol headers, the context's request headers, then HeaderFunc.
func (c *httpConn) newPOST(ctx context.Context, x *exchange, body []byte) (*http.Request, error) {
	req, pb, err := newPostRequest(x.ctx, c.client, c.endpoint, body)
	if err != nil {
		return nil, err
	}
	x.body = pb
	hs := headersOf(req, 6)
	if err := c.prepare(ctx, req, &hs, x.version, x.sid); err != nil {
		return nil, err
	}
	hs.set(hdrContentType, mediaJSON)
	hs.set(hdrAccept, acceptPOST)
	if x.era == negotiation.EraModern && x.method != "" {
		hs.set(hdrMethod, x.method)
		if x.st != nil {
			if name, ok := nameHeader(x.method, x.params); ok {
				hs.set(hdrName, name)
			}
		}
	}
	for k, vs := range RequestHeaders(ctx) {
		req.Header[http.CanonicalHeaderKey(k)] = vs
	}
	return applyHook(ctx, req, c.headerFunc)
}

// prepare sets the headers every request of the connection carries, the
// protocol's through hs.
func (c *httpConn) prepare(ctx context.Context, req *http.Request, hs *reqHeaders, version, sid string) error {
	if err := commonHeaders(ctx, req, c.header, c.tokens); err != nil {
		return err
	}
	if version != "" {
		hs.set(hdrProtocolVersion, version)
	}
	if sid != "" && negotiation.EraOf(version) != negotiation.EraModern {
		hs.set(hdrSessionID, sid)
	}
	return nil
}

// answer handles the response to the POST of x: a refusal, an
// acknowledgement, a JSON body (read here) or an event stream (read by a
// goroutine of its own). stop detaches the caller's ctx from x.
func (c *httpConn) answer(ctx context.Context, x *exchange, resp *http.Response, stop func() bool) error {
	if x.era != negotiation.EraModern {
		c.captureSession(resp)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		herr := newHTTPError(http.MethodPost, c.url, resp)
		if resp.StatusCode == http.StatusNotFound && x.sid != "" {
			herr.SessionExpired = true
			c.expireSession(x.sid)
		}
		return c.abandon(x, herr)
	}
	if x.era == negotiation.EraLegacy {
		c.postSucceeded()
	}
	mt := mediaType(resp.Header.Get("Content-Type"))
	stream := mt == mediaEventStream
	if !stream && mt != mediaJSON || resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent {
		if x.st == nil {
			// A notification or response: any 2xx means accepted.
			drain(resp.Body)
			x.cancel(nil)
			return nil
		}
		return c.abandon(x, newHTTPError(http.MethodPost, c.url, resp))
	}
	if !stream {
		return c.readJSON(ctx, x, resp)
	}
	if !stop() {
		// ctx ended just as the headers arrived; the request is cancelled.
		resp.Body.Close()
		return c.abandon(x, ctx.Err())
	}
	rctx, cancel, id, st, era, take := x.ctx, x.cancel, x.id, x.st, x.era, x.take
	if !c.spawn(func() {
		presizeStack()
		c.readResponse(rctx, cancel, resp, id, st, era, take)
	}) {
		// Close began as the answer arrived: the server has the
		// request (see inFlight).
		resp.Body.Close()
		return c.abandon(x, inFlight(http.MethodPost, c.url, ErrClosed))
	}
	return nil
}

// readJSON reads the JSON message body of a 2xx POST answer on Write's
// goroutine, bounded by Write's ctx (whose end cancels reqCtx), and queues
// the message for Read; for a request whose response is not in the body
// it queues a *StreamError instead. It returns ctx.Err() when ctx ended
// before the body was read; a request abandoned by CancelStream or Close
// meanwhile reports nothing, as a stream does.
func (c *httpConn) readJSON(ctx context.Context, x *exchange, resp *http.Response) error {
	id := x.id
	defer x.cancel(nil)
	defer c.forget(id, x.st)
	data, err := readLimited(resp.Body, c.maxMsg, resp.ContentLength)
	resp.Body.Close()
	if x.ctx.Err() != nil {
		return ctx.Err()
	}
	if err == nil && jsonrpc.IsBatch(data) {
		if c.enqueueBatch(data, id) {
			return nil
		}
		c.enqueue(inbound{err: &StreamError{ID: id, Err: errors.New("the batch in the body holds no response to the request")}})
		return nil
	}
	var msg jsonrpc.Message
	if err == nil && (id.IsValid() || len(bytes.TrimSpace(data)) > 0) {
		msg, err = jsonrpc.DecodeMessageOwned(data) // data is this body's own buffer
	}
	if msg != nil && !taken(x.take, msg, id) {
		c.enqueue(inbound{msg: msg, on: id})
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
func (c *httpConn) readResponse(ctx context.Context, cancel context.CancelCauseFunc, resp *http.Response, id jsonrpc.ID, st *reqStream, era negotiation.Era, take func(*jsonrpc.Response) bool) {
	defer cancel(nil)
	defer c.forget(id, st)
	res := c.consume(ctx, resp.Body, id, take, true, eventIDs{})
	if res.finishing {
		defer c.endFinishing()
	}
	if res.got && res.err == nil {
		// The server should end the stream after the response. Reading
		// on to its end, boundedly, keeps the connection for the next
		// request: closing a body that is not at its end tears the
		// connection down, and every call would pay a new TCP (and TLS)
		// connection. A response held by consume is handed on once the
		// stream ended (see drainStream).
		c.forget(id, st)
		hand := func() {}
		if res.held != nil {
			if !res.heldFirst {
				take = nil // it follows the stream's other messages through Read
			}
			// c.ctx: the request's own ends when a lingering stream is cancelled.
			hand = func() { c.handOn(c.ctx, res.held, id, take) }
		}
		c.drainStream(resp.Body, cancel, hand)
	}
	resp.Body.Close()
	if res.got || ctx.Err() != nil || !id.IsValid() {
		if res.err != nil && ctx.Err() == nil {
			c.log.Warn("transport: reading response body", "url", c.url, "err", res.err)
		}
		return
	}
	if res.lastID != "" && era == negotiation.EraLegacy {
		var err error
		res.got, err = c.getLoop(ctx, id, res.lastID, res.retry, res.seen)
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
	got       bool              // the response to the wanted id was delivered
	events    int               // events seen, priming events included, replays not
	delivered int               // messages delivered
	finishing bool              // the response to want came; Close lets the stream end (startFinishing)
	held      *jsonrpc.Response // the response to want, not handed on yet (consume's hold)
	heldFirst bool              // held was the stream's first message
	lastID    string            // last event id seen
	seen      eventIDs          // the events delivered, to skip their replays (see consume)
	retry     time.Duration     // last retry field
	err       error             // read error; nil for a clean end
}

// consume reads an event stream and delivers its messages in order. It
// stops after delivering the response to want (if valid). A broken answer
// (to want or another id) is delivered as its non-terminal
// *jsonrpc.DecodeError and the stream goes on: if it then ends without the
// response to want, the *StreamError follows as before. take, when not
// nil, is offered the response to want when it is the stream's first
// message (see [ResponseTaker]). With finish, the response to want
// starts the stream's finishing (startFinishing), which the caller ends,
// and is not handed on but returned in held (when it is a response, not
// an error to deliver): the caller hands it on (handOn) once the stream
// ended. seen holds the events that the stream's earlier connections
// delivered: an event with the id and the data of one of them is a
// replay (event ids are unique within a session) and is skipped. The
// result's seen is seen with the events consume delivered, but for the
// response to want, which ends the stream.
func (c *httpConn) consume(ctx context.Context, body io.Reader, want jsonrpc.ID, take func(*jsonrpc.Response) bool, finish bool, seen eventIDs) streamResult {
	res := streamResult{seen: seen}
	res.retry, res.err = readEvents(body, c.maxMsg, func(ev event) bool {
		if ev.LastID != "" {
			res.lastID = ev.LastID
		}
		if ev.ID != "" && res.seen.has(ev.ID, ev.Data) {
			// Not counted in res.events: a stream of replays alone
			// brings nothing, and its resumption must not go on for
			// ever (see getLoop).
			c.log.Debug("transport: skipping an event replayed on a resumed stream", "id", ev.ID, "url", c.url)
			return true
		}
		res.events++
		if isBatchEvent(ev) {
			res.delivered++
			res.seen.add(ev.ID, ev.Data)
			return c.deliverBatch(ctx, ev.Data, want, &res.got)
		}
		msg, broken := decodeEventAnswer(ev)
		switch {
		case broken != nil:
			res.delivered++
			res.seen.add(ev.ID, ev.Data)
			return c.deliver(ctx, inbound{err: broken})
		case msg == nil:
			switch {
			case len(ev.Data) == 0: // a priming event
			case ev.Type == "" || ev.Type == "message":
				c.log.Warn("transport: ignoring an event that is not a JSON-RPC message", "url", c.url)
			default:
				c.log.Debug("transport: ignoring event", "type", ev.Type, "url", c.url)
			}
			return true
		}
		// The response, as the stream's first message, goes straight to
		// its caller when the session takes it; after other messages it
		// follows them through Read, in order.
		r, isResp := msg.(*jsonrpc.Response)
		answer := isResp && want.IsValid() && r.ID == want
		// The stream's finishing starts before its answer can reach the
		// caller, who may Close at once: before the hook takes it, or
		// once Read has it (not before: with no Read, Close would wait).
		finishing := func() {
			if answer && finish && !res.finishing {
				c.startFinishing()
				res.finishing = true
			}
		}
		if answer && finish {
			finishing()
			res.held, res.heldFirst, res.got = r, res.delivered == 0, true
			res.delivered++
			return false
		}
		if !answer {
			// Before the message leaves: it may alias ev.Data.
			res.seen.add(ev.ID, ev.Data)
		}
		took := false
		if res.delivered == 0 && take != nil && answer {
			took = take(r)
		}
		if !took && !c.deliver(ctx, inbound{msg: msg, on: want}) {
			return false
		}
		res.delivered++
		if answer {
			res.got = true
			return false
		}
		return true
	})
	return res
}

// maxEventIDs is how many delivered events a stream remembers to skip
// their replays (see eventIDs).
const maxEventIDs = 1024

// eventSeed seeds the hashes of eventIDs.
var eventSeed = maphash.MakeSeed()

// eventIDs holds hashes of the ids and of the data of the last
// maxEventIDs events a response stream or the GET stream delivered,
// across its resumptions, so that an event a server replays after
// Last-Event-ID is not delivered twice. An event that reuses an id with
// other data is not a replay (a server that numbers the events of each
// connection afresh, against the spec): it is delivered. Hashes, not
// the ids, so that what it holds does not grow with the ids a server
// chooses; the seed is the process's own, so no server can make two
// events collide. The zero value is empty; it makes its map at the first
// id. A copy shares the map: only the latest copy is used.
type eventIDs struct {
	set   map[uint64]uint64 // the hash of an id: the hash of its event's data
	order []uint64          // set's keys, oldest first
}

// has reports whether the event id with data was added.
func (s *eventIDs) has(id string, data []byte) bool {
	h, ok := s.set[maphash.String(eventSeed, id)]
	return ok && h == maphash.Bytes(eventSeed, data)
}

// add remembers the event id ("" is not an id) with data, forgetting the
// oldest beyond maxEventIDs.
func (s *eventIDs) add(id string, data []byte) {
	if id == "" {
		return
	}
	if s.set == nil {
		s.set = make(map[uint64]uint64)
	}
	k, h := maphash.String(eventSeed, id), maphash.Bytes(eventSeed, data)
	if _, ok := s.set[k]; ok {
		s.set[k] = h // the id's latest event
		return
	}
	s.set[k] = h
	s.order = append(s.order, k)
	if len(s.order) > maxEventIDs {
		delete(s.set, s.order[0])
		s.order = s.order[1:]
	}
}

// handOn hands r, the response to want that consume held, to its caller:
// straight to it when the session takes it (take, when the response was
// its stream's first message), otherwise through Read.
func (c *httpConn) handOn(ctx context.Context, r *jsonrpc.Response, want jsonrpc.ID, take func(*jsonrpc.Response) bool) {
	if take != nil && take(r) {
		return
	}
	c.deliver(ctx, inbound{msg: r, on: want})
}

// How long and how far a response stream is read on after its response,
// for the server to end it (see drainStream). streamDrainWait is a
// variable for the tests alone (export_test.go).
var streamDrainWait = 100 * time.Millisecond

const streamDrainLimit = 64 << 10

// errStreamDrained cancels a response stream that did not end within
// streamDrainWait after its response.
var errStreamDrained = errors.New("transport: response stream not ended after its response")

// drainStream discards what is left of a response stream after its
// response, until the server ends it, for at most streamDrainWait and
// streamDrainLimit bytes; cancel (the request's) ends a stream that the
// server keeps open. Nothing of it is delivered: the server should send
// nothing after the response. hand, which hands the response on, runs
// once the stream ended, so that the caller's next request finds the
// connection back in the pool instead of dialling another beside it. A
// server that kept a stream open past streamDrainWait (its response then
// handed on once the stream is cancelled) is one whose streams linger:
// from then on the connection hands its responses on at once.
func (c *httpConn) drainStream(body io.Reader, cancel context.CancelCauseFunc, hand func()) {
	if c.lingers.Load() {
		hand()
		hand = nil
	}
	t := time.AfterFunc(streamDrainWait, func() {
		c.lingers.Store(true)
		cancel(errStreamDrained)
	})
	_, _ = io.Copy(io.Discard, io.LimitReader(body, streamDrainLimit))
	t.Stop()
	if hand != nil {
		hand()
	}
}
