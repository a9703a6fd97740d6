package engine

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// start makes the first connection and negotiates on it, then runs the
// loop (which starts the dispatcher when it has something to hand it).
//
// Until the loop runs, Connect's goroutine plays its part: it begins the
// negotiation, runs each step's I/O, and runs the step that I/O returns
// as the loop would, so that a connect whose negotiation nothing else
// interrupts never wakes another goroutine to learn its outcome. The
// state is Connect's while it holds s.own; the I/O runs without it. The
// first event posted by anything else (the reader, a call's abandonment)
// starts the loop (startLoop), which takes the state over through s.own:
// from then on a step's outcome goes to the loop as an evStep, and
// Connect's goroutine runs the I/O the loop hands it until the outcome.
// A negotiation that ended on Connect's goroutine leaves the loop
// unstarted until something posts to it.
func (s *Session) start(ctx context.Context) error {
	conn, err := s.t.Connect(ctx)
	if err != nil {
		s.startLoop() // for Close
		return err
	}
	done := make(chan error, 1)
	d := &driver{s: s, t: s.t, ctx: ctx, worker: make(chan stepIO), beginning: true}
	s.own.Lock()
	s.install(conn)
	d.begin(done) // a step never blocks; its I/O is held (driver.spawn)
	io := d.held
	for io != nil && !s.looping.Load() {
		d.held = nil
		s.own.Unlock()
		next, undo := io()
		s.own.Lock()
		if s.looping.Load() {
			// The loop started during the I/O: next is the loop's to run.
			io = func() (func(), func()) { return next, undo }
			break
		}
		next()
		io = d.held
	}
	d.held, d.beginning = nil, false
	if io != nil || len(done) == 0 {
		s.startLoop()
	}
	// Otherwise the negotiation ended on this goroutine and the loop
	// has nothing to do: it starts with the first event posted (post,
	// emit), and a session nothing happens to is closed without it
	// (Close, closeIdle).
	s.own.Unlock()
	// While it waits, this goroutine runs the steps' I/O (driver.spawn).
	if io != nil {
		d.runIO(io)
	}
	select {
	case err := <-done: // the negotiation ended on this goroutine
		return err
	default:
	}
	for {
		select {
		case err := <-done:
			return err
		case io := <-d.worker:
			d.runIO(io)
		case <-s.loopEnded():
			select {
			case err := <-done:
				return err
			default:
				return ErrClosed
			}
		}
	}
}

// begin starts Connect's negotiation; its outcome goes to done. It runs
// as the loop, on Connect's goroutine before the loop starts (see start).
func (d *driver) begin(done chan<- error) {
	s := d.s
	d.finish = func(err error) {
		if err != nil && !d.retried && s.hinted() && d.ctx.Err() == nil && !errors.Is(err, ErrClosed) {
			d.retried = true
			d.unhinted(err)
			return
		}
		if err != nil {
			err = &NegotiationError{Mode: s.cfg.Mode, Trace: d.trace, Err: err}
		}
		done <- err
	}
	first, err := d.initial()
	if err != nil {
		d.fail(err)
		return
	}
	d.run(first)
}

// hinted reports whether Connect started from an era hint.
func (s *Session) hinted() bool {
	return s.cfg.Mode == ModeAuto && s.cfg.EraHint != negotiation.EraUnknown
}

// unhinted verifies an era hint that failed the negotiation with cause:
// the remembered verdict may be what failed, so the session negotiates
// from scratch once, probing on a new connection of the configured
// transport. HintFailed reports it afterwards. It runs on the loop.
func (d *driver) unhinted(cause error) {
	s := d.s
	s.hintFailed = true
	s.log.Debug("era hint failed; probing", "err", cause)
	d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era hint failed: " + errText(cause), Verdict: "re-probe"})
	d.fellBack, d.initAuths = nil, 0
	d.switchTransport(s.t, func(err error) {
		if err != nil {
			d.fail(err)
			return
		}
		d.run(probeStep(d.s.versions(), true))
	})
}

// HintFailed reports whether the era hint of [Config.EraHint] failed the
// negotiation, so that the session negotiated from scratch instead (an
// era cache should forget the hint). It is set before Connect returns.
func (s *Session) HintFailed() bool { return s.hintFailed }

// startHeal begins reconnecting after ref was lost (or, with reprobe,
// re-probing after an era hint proved wrong). It runs on the loop, which
// sequences the heal's steps (driver); new user calls wait until it is
// done.
func (s *Session) startHeal(ref *connRef, cause error, reprobe bool) {
	lp := &s.lp
	if lp.healing || !lp.st.ready() || s.dctx.Context.Err() != nil {
		return // a closing session does not heal
	}
	if s.pending.healed() > maxConsecutiveHeals {
		s.failSession(&ConnectionLostError{Err: cause})
		return
	}
	lp.healing = true
	s.setState(StateReconnecting)
	s.heal(s.pub.Load().neg, cause, reprobe)
}

// heal reconnects and re-negotiates in the pinned era (or re-probes). It
// runs on the loop and returns once the first step is under way.
func (s *Session) heal(prev *negState, cause error, reprobe bool) {
	ctx, cancel := context.WithTimeout(s.dctx.Context, HealTimeout)
	d := &driver{s: s, ctx: ctx, t: prev.transport, trace: slices.Clone(prev.trace)}
	d.finish = func(err error) {
		cancel()
		if err != nil {
			s.log.Warn("session could not be restored", "err", err)
			s.failSession(&ConnectionLostError{Err: &NegotiationError{Mode: s.cfg.Mode, Trace: d.trace, Err: err}})
		}
	}
	if reprobe {
		d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era hint contradicted: " + errText(cause), Verdict: "re-probe"})
		d.run(probeStep(d.s.versions(), true))
		return
	}
	d.step(TraceStep{Step: "reconnect", Sent: "none", Outcome: "connection lost: " + errText(cause), Verdict: "reconnect"})
	// Re-negotiate in the pinned era, on a new connection.
	next := initStep(prev.version, true, false)
	if prev.era == negotiation.EraModern {
		next = probeStep([]string{prev.version}, false)
	}
	d.reconnect(func() { d.run(next) })
}

// sleep waits d, or until ctx ends or the session closes.
func (s *Session) sleep(ctx context.Context, d time.Duration) error {
	return sleepUntil(ctx, d, s.closing())
}

// sleepUntil waits d, or until ctx ends (its error) or closing is closed
// (ErrClosed).
func sleepUntil(ctx context.Context, d time.Duration, closing <-chan struct{}) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-closing:
		return ErrClosed
	}
}

// retrier paces retries of transient failures with exponential backoff.
type retrier struct {
	b          *backoff.ExponentialBackOff
	attempts   int
	max        int
	maxElapsed time.Duration
	start      time.Time
}

func newRetrier(p RetryPolicy) *retrier {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 200 * time.Millisecond
	if p.InitialInterval > 0 {
		b.InitialInterval = p.InitialInterval
	}
	b.MaxInterval = 5 * time.Second
	if p.MaxInterval > 0 {
		b.MaxInterval = p.MaxInterval
	}
	r := &retrier{b: b, max: 5, maxElapsed: 30 * time.Second, start: time.Now()}
	if p.MaxAttempts != 0 {
		r.max = p.MaxAttempts
	}
	if p.MaxElapsed > 0 {
		r.maxElapsed = p.MaxElapsed
	}
	return r
}

// next returns the wait before the next attempt (at least retryAfter), or
// false when the attempts or the elapsed time are used up.
func (r *retrier) next(retryAfter time.Duration) (time.Duration, bool) {
	r.attempts++
	if r.max < 0 || r.attempts >= r.max {
		return 0, false
	}
	d := r.b.NextBackOff()
	if d == backoff.Stop {
		return 0, false
	}
	if retryAfter > d {
		d = retryAfter
	}
	if d > r.maxElapsed-time.Since(r.start) { // not Since+d: d may be the largest Duration
		return 0, false
	}
	return d, true
}

// pacer paces MRTR rounds that carried only requestState (load shedding).
type pacer struct{ b *backoff.ExponentialBackOff }

func newPacer() *pacer {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 100 * time.Millisecond
	b.MaxInterval = 5 * time.Second
	return &pacer{b: b}
}

func (p *pacer) wait(ctx context.Context, closing <-chan struct{}) error {
	return sleepUntil(ctx, p.b.NextBackOff(), closing)
}

// hintSuspect reports whether a failure of c contradicts an unverified
// modern era hint. The evidence follows the probe classifier's legacy rows
// (seed table): a -32601 answer at any status, or an HTTP 400/404/405
// whose body is not a modern JSON-RPC error (no body, a non-JSON body, or
// a legacy server's error such as -32000 "No valid session ID").
//
// c.neg is read only once the answer proves that the loop registered c
// (an RPC error, or an HTTP error from the Write that followed the
// registration): after the caller gave up early (a cancelled context) the
// loop may still be registering c.
func (s *Session) hintSuspect(c *call, rpcErr *jsonrpc.Error, err error) bool {
	if s.hintVerified.Load() {
		return false
	}
	suspect := false
	switch {
	case rpcErr != nil:
		suspect = rpcErr.Code == jsonrpc.CodeMethodNotFound
	default:
		he, ok := errors.AsType[*transport.HTTPError](err)
		if !ok {
			return false
		}
		var code int64
		hasBody := he.Response != nil && he.Response.Error != nil
		if hasBody {
			code = he.Response.Error.Code
		}
		switch {
		case hasBody && code == jsonrpc.CodeMethodNotFound:
			suspect = true
		case he.StatusCode == 400 || he.StatusCode == 404 || he.StatusCode == 405:
			suspect = !hasBody || !negotiation.IsModernError(code)
		}
	}
	if !suspect {
		return false
	}
	n := c.neg
	return n != nil && n.hinted && n.era == negotiation.EraModern
}

// reprobe re-probes after an era hint failed and waits for the outcome. It
// reports whether the era changed (the request should then be re-sent).
func (s *Session) reprobe(ctx context.Context, c *call) (bool, error) {
	s.hintVerified.Store(true) // at most one re-probe
	s.postHeal(c.ref, errors.New("request answered like a legacy server"), true)
	w := newCall("")
	if !s.post(event{kind: evRegister, call: w}) {
		return false, ErrClosed
	}
	r, err := s.await(ctx, w, 0, 0, false)
	if err != nil {
		return false, err
	}
	s.post(event{kind: evAbandon, call: w})
	if r.err != nil {
		return false, r.err
	}
	return w.neg.era != negotiation.EraModern, nil
}
