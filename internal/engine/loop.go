package engine

import (
	"context"
	"errors"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// loopState is every field the loop goroutine owns. Nothing else touches
// it (habit 15); other goroutines post events. (Before the loop starts,
// Connect's goroutine plays its part, holding Session.own: see start.)
// The pending-call table is not here: it is Session.pending, a
// mutex-guarded struct that callers and the reader use directly (see
// pendingTable).
type loopState struct {
	st      State    // the state machine; owned by loop
	ref     *connRef // current connection; owned by loop
	waiting []*call  // user calls held while not ready; owned by loop
	// The maps are made at their first entry (a connect that never
	// serves a request or listens makes none); nil maps read as empty.
	serving map[served]context.CancelFunc // legacy server requests in flight; owned by loop
	streams map[int64]*Stream             // listen streams by listen request id; owned by loop
	durable map[*Stream]struct{}          // live durable streams, listening or waiting to re-listen; owned by loop
	backlog []*Stream                     // streams holding notifications back for a slow consumer (relisten.go); owned by loop
	queue   []dispatchItem                // notifications waiting for the dispatcher; owned by loop
	ol      overload                      // overload bookkeeping (overload.go); owned by loop
	done    bool                          // doneCh closed; owned by loop
	healing bool                          // a heal's negotiation is running; owned by loop
	// dispatching: the dispatcher runs; the loop starts it with the
	// first item to hand it (a session that never gets one has none).
	dispatching bool
	// handled counts the events the loop has handled (a connect's own
	// negotiation, run on Connect's goroutine, adds none: see start).
	handled uint64
}

// eventKind is the closed set of messages the loop accepts.
type eventKind uint8

const (
	evRegister       eventKind = iota + 1 // call: register (or hold) a request
	evAbandon                             // call: the caller gave up; cancel: tell the server
	evRead                                // ref, msg: a message from the reader
	evReadErr                             // ref, err: a read error
	evServed                              // ref, id: a legacy server request finished
	evHeal                                // ref, err: a caller saw the connection or session lost; reprobe: the era hint failed
	evInstall                             // conn: Connect connected; make conn the current connection
	evStep                                // step: a negotiation step's I/O is done; run what follows (driver.go)
	evRestored                            // the legacy subscriptions were re-sent; tell the dispatcher
	evRejected                            // the rejecter wrote its batch of refusals (overload.go)
	evRelisten                            // stream: the re-listen backoff elapsed (relisten.go)
	evRelistenFailed                      // stream, call, err: a re-listen could not be sent
	evCloseStream                         // stream: the consumer closed it
)

// event is one message to the loop. It is passed by value so that posting
// does not allocate.
type event struct {
	kind    eventKind
	call    *call
	stream  *Stream
	step    func() // evStep: runs on the loop
	ref     *connRef
	msg     jsonrpc.Message
	err     error
	id      jsonrpc.ID
	conn    transport.Conn
	done    chan struct{} // closed by the loop once it handled the event (see ask)
	cancel  bool
	reprobe bool
	reason  string
}

// post sends ev to the loop, starting the loop if Connect's goroutine
// still plays its part (see start); after the loop ended ev is dropped.
func (s *Session) post(ev event) bool {
	s.startLoop()
	select {
	case s.events <- ev:
		return true
	case <-s.loopEnded():
		return false
	}
}

// postHeal tells the loop that a caller saw ref lost (or, with reprobe,
// the era hint contradicted). The pending table is shut for ref first, so
// that the caller's replay, and every call after it, goes through the
// loop, behind this event, instead of registering on the lost connection.
func (s *Session) postHeal(ref *connRef, err error, reprobe bool) {
	s.pending.shut(ref)
	s.post(event{kind: evHeal, ref: ref, err: err, reprobe: reprobe})
}

// ask posts ev and waits until the loop has handled it. It returns
// ErrClosed if the loop has ended first.
func (s *Session) ask(ev event) error {
	ev.done = make(chan struct{})
	if !s.post(ev) {
		return ErrClosed
	}
	select {
	case <-ev.done:
		return nil
	case <-s.loopEnded():
		select {
		case <-ev.done:
			return nil
		default:
			return ErrClosed
		}
	}
}

// startLoop starts the loop's goroutine, once, and makes its event
// channel; everything that sends the loop an event calls it first (and
// then may read s.events).
func (s *Session) startLoop() {
	s.eventsOnce.Do(s.makeEvents)
	if !s.looping.Load() && s.looping.CompareAndSwap(false, true) {
		go s.runLoop()
	}
}

// makeEvents makes the channels the loop receives on: events and the
// kick of the OnEvent queue (see eventQueue).
func (s *Session) makeEvents() {
	s.events = make(chan event, eventBuffer)
	s.evq.kick = make(chan struct{}, 1)
}

// runLoop runs the loop and then, on the same goroutine, joins the
// session's other goroutines for Close: joined is closed once wg is done.
// It is the one goroutine Close may leave behind, and only when a handler
// ignores its cancelled context past CloseTimeout. The loop's state is
// its own once Connect's goroutine let go of s.own (see start).
func (s *Session) runLoop() {
	s.own.Lock()
	//lint:ignore SA2001 taking the lock is the hand-over from start
	s.own.Unlock()
	s.loop()
	s.joinMu.Lock()
	s.joining = true // no reader starts after this (startReader)
	s.joinMu.Unlock()
	s.wg.Wait()
	s.fire(sigJoined)
}

// loop is the session's owner goroutine. It blocks in exactly one select:
// events from callers, the reader and the negotiation steps' I/O; the
// dispatcher taking the next queued notification; Close.
func (s *Session) loop() {
	defer s.fire(sigLoopDone)
	lp := &s.lp
	for {
		var out chan dispatchItem
		var head dispatchItem
		if len(lp.queue) > 0 {
			if !lp.dispatching {
				lp.dispatching = true
				if s.dispatchCh == nil {
					s.dispatchCh = make(chan dispatchItem)
				}
				s.wg.Add(1)
				go s.dispatcher()
			}
			out, head = s.dispatchCh, lp.queue[0]
		}
		var feed chan *jsonrpc.Request
		var held *jsonrpc.Request
		if len(lp.backlog) > 0 {
			feed, held = lp.backlog[0].ch, lp.backlog[0].rl.held[0]
		}
		select {
		case ev := <-s.events:
			s.handle(ev)
		case <-s.evq.kick:
			s.moveEvents()
		case out <- head:
			lp.ol.unqueued(&lp.queue[0])
			s.eventTaken(&lp.queue[0])
			s.reportDrops()
			lp.queue[0] = dispatchItem{}
			lp.queue = lp.queue[1:]
			if len(lp.queue) == 0 {
				lp.queue = lp.queue[:0:0]
			}
		case feed <- held:
			s.fed()
		case <-s.closing():
			s.shutdownLoop()
			return
		}
	}
}

func (s *Session) handle(ev event) {
	lp := &s.lp
	lp.handled++
	switch ev.kind {
	case evRegister:
		c := ev.call
		switch {
		case lp.st == StateFailed || lp.st == StateClosed:
			c.deliver(callResult{err: unwritten(c.method, s.terminalErr())})
		case (c.internal && lp.ref != nil) || lp.st.ready():
			s.register(c)
		default:
			lp.waiting = append(lp.waiting, c)
		}
	case evAbandon:
		s.abandonOnLoop(ev.call, ev.cancel, ev.reason)
	case evRead:
		s.route(ev.ref, ev.msg, ev.id)
	case evReadErr:
		s.readErr(ev.ref, ev.err)
	case evServed:
		k := served{ev.ref, ev.id}
		if cancel, ok := lp.serving[k]; ok {
			cancel()
			delete(lp.serving, k)
		}
	case evHeal:
		if ev.ref == lp.ref {
			s.startHeal(ev.ref, ev.err, ev.reprobe)
		}
	case evInstall:
		s.install(ev.conn)
	case evStep:
		ev.step()
	case evRestored:
		s.enqueue(dispatchItem{restored: true})
	case evRejected:
		s.lp.ol.rejecting = false
		s.startRejecter()
	case evRelisten:
		s.relistenNow(ev.stream)
	case evRelistenFailed:
		s.relistenFailed(ev.stream, ev.call, ev.err)
	case evCloseStream:
		s.closeStream(ev.stream)
	default:
		panic("session: unknown loop event")
	}
	if ev.done != nil {
		close(ev.done)
	}
}

// register gives c an id on the current connection and tracks it. It
// runs on the loop, for the calls that do not register directly (see
// pendingTable.tryRegister): listen streams, user calls that waited for a
// ready state, negotiation traffic that found no current connection.
func (s *Session) register(c *call) {
	lp := &s.lp
	s.pending.register(c, lp.ref, s.pub.Load().neg)
	if st := c.stream; st != nil {
		st.id.Store(c.id)
		if lp.streams == nil {
			lp.streams = make(map[int64]*Stream)
		}
		lp.streams[c.id] = st
		if st.rl.durable {
			if lp.durable == nil {
				lp.durable = make(map[*Stream]struct{})
			}
			lp.durable[st] = struct{}{}
		}
	}
	c.deliver(callResult{registered: true})
}

// forget removes c, already out of the pending table, from the loop's own
// bookkeeping (listen streams). It runs on the loop.
func (s *Session) forget(c *call) {
	if c.stream != nil {
		delete(s.lp.streams, c.id)
	}
}

// unpend removes c from the pending table and the loop's bookkeeping and
// reports whether it was pending. It runs on the loop.
func (s *Session) unpend(c *call) bool {
	if !s.pending.remove(c) {
		return false
	}
	s.forget(c)
	return true
}

func (s *Session) abandonOnLoop(c *call, cancel bool, reason string) {
	lp := &s.lp
	if s.unpend(c) {
		if c.stream != nil && !c.stream.rl.durable {
			// A durable stream ends only by closeStream or after its
			// re-listens (evRelistenFailed).
			c.stream.end(nil)
		}
		if cancel && !c.noCancel {
			s.cancelRemote(c.ref, c.id, reason)
		}
		return
	}
	for i, w := range lp.waiting {
		if w == c {
			lp.waiting = append(lp.waiting[:i], lp.waiting[i+1:]...)
			return
		}
	}
}

// route handles one message read from ref (on the response stream of
// request on, when valid; see transport.OriginReader). Responses to plain
// calls and to negotiation requests do not come here: the reader resolves
// them (pendingTable.resolveDirect).
func (s *Session) route(ref *connRef, m jsonrpc.Message, on jsonrpc.ID) {
	switch m := m.(type) {
	case *jsonrpc.Response:
		c := s.pending.resolve(m)
		if c == nil {
			s.log.Debug("dropping response to an unknown or abandoned request", "id", m.ID)
			return
		}
		s.forget(c)
		if c.stream != nil {
			// The server ended a listen: gracefully with a result, or
			// with an error (a durable stream listens again).
			s.streamEnded(c.stream, m.Err())
			return
		}
		r := callResult{resp: m}
		if c.flush {
			r.flushed = s.flushed()
		}
		c.deliver(r)
	case *jsonrpc.Request:
		if m.IsNotification() {
			s.notification(ref, m)
			return
		}
		s.serverRequest(ref, m, on)
	}
}

// readErr handles a read error from ref's reader.
func (s *Session) readErr(ref *connRef, err error) {
	lp := &s.lp
	if cl, ok := errors.AsType[*ConnectionLostError](err); ok && cl.Method == "" {
		// The reader gave up after too many bad reads in a row (see
		// reader): the connection is lost even though each error alone
		// would not end it, and the reader has exited.
		s.connLost(ref, err)
		if ref == lp.ref && lp.st.ready() {
			s.startHeal(ref, err, false)
		}
		return
	}
	if se, ok := errors.AsType[*transport.StreamError](err); ok {
		// One response stream broke; the connection goes on.
		if errors.Is(se, transport.ErrSessionExpired) && ref == lp.ref && lp.st.ready() {
			// Resuming the stream found the legacy session gone (404):
			// initialize a new one now, before the caller learns of the
			// loss, so that its replay (and the next request) waits
			// for the new session instead of meeting the 404, or the
			// heal closing the connection under it.
			s.startHeal(ref, err, false)
		}
		n, isInt := se.ID.Int64()
		if c := s.pending.takeOn(n, ref); isInt && c != nil {
			s.forget(c)
			if c.stream != nil {
				s.streamEnded(c.stream, &ConnectionLostError{Method: c.method, Err: err})
				return
			}
			c.deliver(callResult{err: &ConnectionLostError{Method: c.method, Err: err}})
		}
		return
	}
	if errors.Is(err, jsonrpc.ErrParse) || errors.Is(err, jsonrpc.ErrInvalidRequest) {
		s.log.Warn("dropping malformed message from server", "err", err)
		s.failMalformed(ref, err)
		return
	}
	// The connection ended: fail what was in flight on it.
	s.connLost(ref, err)
	if ref == lp.ref && lp.st.ready() {
		s.startHeal(ref, err, false)
	}
}

// failMalformed fails, at once, the request in flight on ref that a
// malformed answer was meant for, when the transport recovered its id
// ([jsonrpc.DecodeError.ID]): the caller gets a typed protocol error
// instead of waiting for its timeout.
func (s *Session) failMalformed(ref *connRef, err error) {
	de, ok := errors.AsType[*jsonrpc.DecodeError](err)
	if !ok || !de.ID.IsValid() {
		return
	}
	n, isInt := de.ID.Int64()
	if !isInt {
		return
	}
	c := s.pending.takeOn(n, ref)
	if c == nil {
		return
	}
	s.forget(c)
	perr := &ProtocolError{Method: c.method, Reason: "malformed response: " + de.Reason, Err: ErrInvalidResponse}
	if c.stream != nil {
		s.streamEnded(c.stream, perr)
		return
	}
	c.deliver(callResult{err: perr})
}

// connLost fails every request in flight on ref and cancels the handlers
// of the server requests that came on it (on any connection, when ref is
// the current one): their answers have nowhere to go.
func (s *Session) connLost(ref *connRef, err error) {
	lp := &s.lp
	for _, c := range s.pending.take(ref) {
		s.forget(c)
		lost := &ConnectionLostError{Method: c.method, Err: err}
		if c.stream != nil {
			s.streamEnded(c.stream, lost)
			continue
		}
		c.deliver(callResult{err: lost})
	}
	for k, cancel := range lp.serving {
		if k.ref == ref || ref == lp.ref {
			cancel()
			delete(lp.serving, k)
		}
	}
}

// install makes conn the current connection and starts its reader. It
// runs on the loop (for the first connection, on Connect's goroutine
// before the loop starts: see start).
func (s *Session) install(conn transport.Conn) *connRef {
	var gen uint64
	if lp := &s.lp; lp.ref != nil {
		gen = lp.ref.gen
	}
	ref := &connRef{conn: conn, gen: gen + 1, kind: kindOf(conn), class: transport.ClassOf(conn)}
	s.pending.shut(s.lp.ref) // reopened by the next ready state, on ref
	s.pending.setCurrent(ref)
	s.lp.ref = ref
	if s.lp.st != StateStart {
		// The first connection is published with the state that leaves
		// StateStart, as every state is with lp.ref (setStateWith).
		s.publish(func(v *view) { v.ref = ref })
	}
	if rt, ok := conn.(transport.ResponseTaker); ok {
		rt.TakeResponses(func(r *jsonrpc.Response) bool { return s.take(ref, r) })
	}
	if rw, ok := conn.(transport.ReadWaker); ok {
		// Streamable HTTP: no goroutine waits in Read until there is
		// something to read (at the latest, the connection's close).
		rw.WakeReader(func() { s.startReader(ref) })
		return ref
	}
	s.wg.Add(1)
	go s.reader(ref)
	return ref
}

// startReader starts ref's reader when its connection first has
// something to read (transport.ReadWaker), from whichever goroutine
// learns it: not once the session is closing (the reader would return at
// once), nor once runLoop is joining the session's goroutines.
func (s *Session) startReader(ref *connRef) {
	s.joinMu.Lock()
	defer s.joinMu.Unlock()
	if s.joining || s.dctx.Context.Err() != nil {
		return
	}
	s.wg.Add(1)
	go s.reader(ref)
}

// take delivers r, a response the connection read on the goroutine that
// wrote its request (transport.ResponseTaker), to the call waiting for
// it, as the reader would have: only to a call the reader delivers to
// itself (pendingTable.resolveDirect); it returns false for any other,
// which then reaches the reader.
func (s *Session) take(ref *connRef, r *jsonrpc.Response) bool {
	c := s.pending.resolveDirect(r)
	if c == nil {
		return false
	}
	ref.tookGood.Store(true)
	if s.cfg.Tap != nil {
		s.cfg.Tap(false, r)
	}
	c.deliver(callResult{resp: r})
	return true
}

func kindOf(conn transport.Conn) string {
	if k, ok := conn.(transport.Kinder); ok {
		return k.Kind()
	}
	return transport.KindMemory
}

// write is the session's single write point: every message it sends
// (requests of every kind, notifications, answers to server requests)
// passes the message tap ([Config.Tap]) here, then goes to ref's
// connection. The reader is the single read point.
func (s *Session) write(ctx context.Context, ref *connRef, m jsonrpc.Message) error {
	if s.cfg.Tap != nil {
		s.cfg.Tap(true, m)
	}
	return ref.conn.Write(ctx, m)
}

// maxBadReads bounds consecutive non-terminal read errors before the
// connection is treated as broken.
const maxBadReads = 100

// reader reads ref's connection until it ends and hands every message to
// the loop, except a response to a plain call or a negotiation request,
// which it delivers to the waiting caller itself (pendingTable.resolveDirect; a non-blocking send).
// It never runs user code and never blocks on anything but Read and the
// loop (which never blocks on it).
func (s *Session) reader(ref *connRef) {
	defer s.wg.Done()
	bad := 0
	or, _ := ref.conn.(transport.OriginReader)
	for {
		var (
			m   jsonrpc.Message
			on  jsonrpc.ID
			err error
		)
		if or != nil {
			m, on, err = or.ReadOrigin(s.dctx.Context)
		} else {
			m, err = ref.conn.Read(s.dctx.Context)
		}
		if ref.tookGood.Swap(false) {
			bad = 0 // a good response was taken since the last read
		}
		if err != nil && s.dctx.Context.Err() != nil {
			// Close has begun: the read failed because of it, which is
			// no loss to report (the loop ends; Close does the rest).
			return
		}
		if err == nil && m != nil && s.cfg.Tap != nil {
			s.cfg.Tap(false, m)
		}
		if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
			if c := s.pending.resolveDirect(resp); c != nil {
				bad = 0
				c.deliver(callResult{resp: resp})
				continue
			}
		}
		ev := event{kind: evRead, ref: ref, msg: m, id: on}
		terminal := false
		if err != nil {
			ev = event{kind: evReadErr, ref: ref, err: err}
			_, stream := errors.AsType[*transport.StreamError](err)
			malformed := errors.Is(err, jsonrpc.ErrParse) || errors.Is(err, jsonrpc.ErrInvalidRequest)
			if stream || malformed {
				bad++
			}
			terminal = !(stream || malformed) || bad > maxBadReads || s.dctx.Context.Err() != nil
			if terminal && (stream || malformed) {
				ev.err = &ConnectionLostError{Err: err}
			}
		} else {
			bad = 0
		}
		if terminal {
			// The connection is gone: new calls wait for the loop (and
			// the heal) instead of registering on it.
			ref.lost.Store(true)
			s.pending.shut(ref)
		}
		s.startLoop()
		select {
		case s.events <- ev:
		case <-s.closing():
			return
		}
		if terminal {
			return
		}
	}
}

// terminalErr is the error calls get once the session failed or closed.
func (s *Session) terminalErr() error {
	if err := s.pub.Load().err; err != nil {
		return err // the failure's: published with StateFailed
	}
	return ErrClosed
}

// unwritten is the error of a request of method that was never handed to
// a connection because the session ended with err: ErrClosed as it is,
// any other end (a heal that failed) a [*ConnectionLostError] that says
// the request was never written (it matches [ErrNotSent]).
func unwritten(method string, err error) error {
	if errors.Is(err, ErrClosed) {
		return err
	}
	if cl, ok := err.(*ConnectionLostError); ok && cl.Method == "" {
		err = cl.Err
	}
	return &ConnectionLostError{Method: method, Err: err, Unsent: true,
		Reason: "the session could not be restored, so the request was never written"}
}

// failSession makes the session unusable with err. It runs on the loop.
func (s *Session) failSession(err error) {
	lp := &s.lp
	if lp.st == StateFailed || lp.st == StateClosed {
		return
	}
	s.setStateWith(StateFailed, func(v *view) { v.err = err })
	s.retireAll(err)
	s.markDone(err)
}

// retireAll fails every pending and waiting call and ends every stream.
func (s *Session) retireAll(err error) {
	lp := &s.lp
	for _, c := range s.pending.take(nil) {
		s.forget(c)
		if c.stream != nil {
			c.stream.end(err)
			continue
		}
		c.deliver(callResult{err: err})
	}
	for _, c := range lp.waiting {
		c.deliver(callResult{err: unwritten(c.method, err)})
	}
	lp.waiting = nil
	for st := range lp.durable {
		st.end(err)
	}
	for id, cancel := range lp.serving {
		cancel()
		delete(lp.serving, id)
	}
}

func (s *Session) markDone(err error) {
	lp := &s.lp
	if lp.done {
		return
	}
	lp.done = true
	if s.pub.Load().err == nil { // else published with the final state
		s.publish(func(v *view) { v.err = err })
	}
	s.fire(sigDone)
}

// becomeReady moves to the negotiated era's state and releases the calls
// that waited. It runs on the loop.
//
// One view publishes the negotiation, the state and the generation
// together. After a heal (a re-negotiation) it bumps the generation and
// closes the channel Reconnected returned, taken from Reconnected with
// that view's publication (under reconnMu: a Reconnected after it gets
// the next one), before it releases the waiting calls: a call replayed on
// the new connection returns after both.
func (s *Session) becomeReady(n *negState, next State) {
	lp := &s.lp
	healed := lp.healing
	lp.healing = false
	if healed {
		s.reconnMu.Lock()
	}
	s.setStateWith(next, func(v *view) {
		v.neg = n
		v.gen++
	})
	if healed {
		old := s.reconn
		s.reconn = nil
		s.reconnMu.Unlock()
		if old != nil {
			close(old)
		}
	}
	waiting := lp.waiting
	lp.waiting = nil
	for _, c := range waiting {
		s.register(c)
	}
	s.emit(Event{Kind: EventEraPinned, Version: n.version})
	if healed && n.era == negotiation.EraLegacy {
		s.emit(Event{Kind: EventReinitialized, Version: n.version})
		// The server holds none of the old session's subscriptions.
		s.wg.Add(1)
		go s.restore()
	}
}

// shutdownLoop runs on the loop when Close was called.
func (s *Session) shutdownLoop() {
	lp := &s.lp
	if lp.st != StateClosed {
		// The error of a session already failed stays.
		s.setStateWith(StateClosed, func(v *view) {
			if v.err == nil {
				v.err = ErrClosed
			}
		})
	}
	s.retireAll(ErrClosed)
	s.reportDrops()
	s.markDone(ErrClosed)
}
