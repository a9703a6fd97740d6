package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// callResult is what a waiting caller receives: from the loop, the
// registration (when the call did not register directly) and then the
// final response or error; from the reader, a response it resolved
// directly.
type callResult struct {
	registered bool
	resp       *jsonrpc.Response
	err        error
	// flushed, with resp, is closed by the dispatcher once the
	// notifications queued before resp arrived have been delivered; nil
	// when the call does not wait for them.
	flushed chan struct{}
}

// call is one outgoing request attempt. The caller fills the first block
// before registering it; the second block is filled at registration under
// the pending table's mutex (by the caller itself, or by the loop before it
// sends the registration on ch, which orders the accesses). Once
// registered, the fields are read by others only under that mutex or after
// they removed the call from the table.
type call struct {
	method     string
	internal   bool // negotiation traffic: allowed before the session is ready
	noCancel   bool // never send notifications/cancelled (initialize)
	timed      bool // has a timeout to reset on progress: needs a progress token
	flush      bool // its result waits for the notifications that came before it (Progress, LogLevel)
	restoring  bool // CallOptions.restoring: its success does not end a run of heals
	progress   func(protocol.ProgressParams)
	progressed chan struct{}   // cap 1; signalled by the loop on progress (timeout reset); may be nil
	stream     *Stream         // a listen request
	ch         chan callResult // cap 2: the registration, then the final result

	id    int64     // written at registration
	token int64     // progress token; written at the first registration
	ref   *connRef  // written at registration
	neg   *negState // written at registration

	// A tied legacy server request's handler failure (tie.go).
	failed *InputError
	// wrote: the request was handed to the connection's Write (set
	// before the write), so it may have reached the server.
	wrote bool

	// Owned by the caller. settled: the final result was received, so
	// neither the table, the loop nor the reader holds a reference any
	// more and the call may be pooled. req and
	// buf are reused for every request the call sends: transports encode
	// a message before Write returns and keep no reference to it.
	settled bool
	req     jsonrpc.Request
	buf     []byte
}

func newCall(method string) *call {
	return &call{method: method, ch: make(chan callResult, 2)}
}

// maxPooledBuffer bounds the params buffer a pooled call keeps.
const maxPooledBuffer = 64 << 10

// getCall returns a call from the session's pool (Session.calls recycles
// the calls of Session.Call with their channels and params buffers, so
// that a request costs no allocation of its own). The pool is per session
// so that channels never cross a testing/synctest bubble.
func (s *Session) getCall(method string) *call {
	c, _ := s.calls.Get().(*call)
	if c == nil {
		c = &call{ch: make(chan callResult, 2)}
	}
	c.method = method
	return c
}

// putCall recycles c. Only settled calls may be recycled: the loop and
// the reader no longer refer to them.
func (s *Session) putCall(c *call) {
	ch, pr, buf := c.ch, c.progressed, c.buf
	for len(ch) > 0 {
		<-ch
	}
	if pr != nil {
		select {
		case <-pr:
		default:
		}
	}
	if cap(buf) > maxPooledBuffer {
		buf = nil
	}
	*c = call{ch: ch, progressed: pr, buf: buf[:0]}
	s.calls.Put(c)
}

// again returns a fresh call for re-sending c under a new id. A call that
// was abandoned after a failed write may still receive a late result from
// the loop or the reader on its channel, so it is never registered again (nor pooled).
func (s *Session) again(c *call) *call {
	n := s.getCall(c.method)
	n.internal, n.noCancel, n.timed, n.flush, n.restoring = c.internal, c.noCancel, c.timed, c.flush, c.restoring
	n.progress, n.progressed, n.token = c.progress, c.progressed, c.token
	return n
}

// deliver hands r to the caller. The channel has room for the two sends a
// registration can produce, so the loop and the reader never block here.
func (c *call) deliver(r callResult) {
	select {
	case c.ch <- r:
	default:
	}
}

// Call sends a request and waits for its final result.
//
// Modern era: params (encoded once) get _meta protocolVersion,
// clientCapabilities, clientInfo, and progressToken/logLevel when asked,
// spliced in without re-encoding; resultType is checked; input_required is
// driven through MRTR for tools/call, prompts/get and resources/read. The
// returned JSON is the final complete result (resultType left in it).
// Legacy era: a plain request; server requests are answered meanwhile.
//
// A request lost with its connection, response stream or legacy HTTP
// session is re-sent once under a new id when the replay policy allows it
// (see [ReplayPolicy]); otherwise the call fails with an
// [*OutcomeUnknownError] (the connection still heals).
//
// Errors: a *jsonrpc.Error from the server; [*MissingCapabilityError] for
// -32021; ctx.Err() when ctx ends; [*RequestTimeoutError];
// [*ConnectionLostError]; [*ProtocolError]; [*InputError]; [ErrClosed]; or
// the session's terminal error. A call that ctx, a request timeout or
// Close ended without an answer says whether the server may have run it
// (see unanswered): its error then also matches [ErrOutcomeUnknown] or
// [ErrNotSent].
func (s *Session) Call(ctx context.Context, method string, params any, opts *CallOptions) (json.RawMessage, error) {
	raw, err := marshalParams(params)
	if err != nil {
		return nil, fmt.Errorf("encoding the params: %w", err)
	}
	if err := checkRaw(params, raw); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	if len(o.Meta) > 0 {
		if raw, err = MergeMeta(raw, o.Meta); err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
	}
	// Only the manual and middleware paths keep the options beyond this
	// frame (in a closure or a held request): they get a heap copy, so
	// that a plain call's options stay on the stack.
	if o.ManualInput && s.Era() != negotiation.EraModern {
		return s.manualLegacyCall(ctx, method, raw, heapCopy(o))
	}
	if s.cfg.Middleware != nil {
		return s.callThrough(ctx, method, raw, heapCopy(o))
	}
	return s.call(ctx, method, raw, &o)
}

// heapCopy returns a copy of o for a path that keeps it.
func heapCopy(o CallOptions) *CallOptions { return &o }

// callOrThrough is call, through Config.Middleware when there is one.
func (s *Session) callOrThrough(ctx context.Context, method string, raw json.RawMessage, o *CallOptions) (json.RawMessage, error) {
	if s.cfg.Middleware != nil {
		return s.callThrough(ctx, method, raw, o)
	}
	return s.call(ctx, method, raw, o)
}

// callState is what one call remembers across its attempts (replays,
// retries, re-authorizations, a re-probe, MRTR rounds). The call's
// options are passed beside it, not kept in it: escape analysis is
// field-insensitive, and keeping them here would move every caller's
// CallOptions to the heap.
type callState struct {
	method   string
	raw      json.RawMessage // the params the caller gave
	cur      json.RawMessage // the params of the next attempt (MRTR rounds add to raw)
	rounds   int             // MRTR rounds so far
	auths    int             // Authorize calls so far
	maybeRan int             // attempts that may have run without an answer (outcome.go)
	lost     lostAttempt     // the last of them
	unsent   int             // attempts not written or refused, re-sent (outcome.go)
	reprobed bool
	why      string // why the next attempt is sent (Message.OnAttempt)
	pace     *pacer
	retry    *retrier
	// urlElicited: the request was re-sent after its URL elicitations
	// completed (-32042); a second -32042 is the caller's.
	urlElicited bool
}

// afterAttempt is what a call does after an attempt.
type afterAttempt uint8

const (
	nextDone   afterAttempt = iota // return the result or the error
	nextResend                     // send the request again under a new id (s.again)
	nextRound                      // send the next MRTR round (cs.cur) on the same call
)

// call sends a request and drives it to its end: replays, retries,
// re-authorizations, MRTR rounds. o.resume, when set, is the state of a
// call resumed after manual input (Session.Resume).
func (s *Session) call(ctx context.Context, method string, raw json.RawMessage, o *CallOptions) (json.RawMessage, error) {
	cs := o.resume
	if cs == nil {
		cs = &callState{method: method, raw: raw, cur: raw}
	}
	tm := timing{start: time.Now(), deadline: o.Timeout, idle: o.IdleTimeout}
	if tm.deadline <= 0 {
		tm.deadline = s.cfg.RequestTimeout
	}
	if tm.idle <= 0 {
		tm.idle = s.cfg.IdleTimeout
	}
	c := s.getCall(method)
	c.progress = o.Progress
	c.flush = (o.Progress != nil || o.LogLevel != "") && !onDispatcher(ctx)
	c.restoring = o.restoring
	if tm.idle > 0 {
		c.timed = true
		if c.progressed == nil {
			c.progressed = make(chan struct{}, 1)
		}
	}
	defer func() {
		if c.settled {
			s.putCall(c)
		}
	}()
	for {
		var (
			res  json.RawMessage
			then afterAttempt
		)
		resp, err := s.attempt(ctx, c, cs.cur, o, &tm)
		if o.sent != nil && c.id != 0 {
			*o.sent = jsonrpc.Int64ID(c.id)
		}
		if err != nil {
			then, err = s.failed(ctx, cs, o, c, err)
		} else {
			res, then, err = s.answered(ctx, cs, o, c, resp)
		}
		if then != nextDone && o.onAttempt != nil {
			why := cs.why
			if then == nextRound {
				why = "input-round"
			}
			o.onAttempt(why, jsonrpc.Int64ID(c.id))
		}
		switch then {
		case nextDone:
			if err != nil {
				err = s.unanswered(ctx, cs, c, err)
			}
			return res, err
		case nextResend:
			c = s.again(c)
		}
	}
}

// timing is a call's time limits: the deadline counted from the call's
// start, which progress does not extend, and the idle timeout counted
// from each attempt's start and reset on progress.
type timing struct {
	start    time.Time
	deadline time.Duration // 0: none
	idle     time.Duration // 0: none
}

// bound returns, for an attempt started at now, the first moment a limit
// elapses and the error it is (the zero time when there is no limit).
func (tm *timing) bound(method string, now time.Time) (time.Time, error) {
	var at time.Time
	var err error
	if tm.idle > 0 {
		at, err = now.Add(tm.idle), &RequestTimeoutError{Method: method, Timeout: tm.idle}
	}
	if tm.deadline > 0 {
		if d := tm.start.Add(tm.deadline); at.IsZero() || d.Before(at) {
			at, err = d, &RequestTimeoutError{Method: method, Timeout: tm.deadline, Absolute: true}
		}
	}
	return at, err
}

// failed decides what a call does after an attempt failed with err: a
// re-probe (an era hint contradicted), a re-authorization, or, for a
// request that ended without an answer, what the outcome rule says
// (outcome.go: a re-send, a replay, or the error).
func (s *Session) failed(ctx context.Context, cs *callState, o *CallOptions, c *call, err error) (afterAttempt, error) {
	method := cs.method
	if !cs.reprobed && s.hintSuspect(c, nil, err) {
		cs.reprobed = true
		if changed, perr := s.reprobe(ctx, c); perr != nil {
			return nextDone, perr
		} else if changed {
			cs.why = "reprobe"
			return nextResend, nil
		}
		if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.Response != nil && he.Response.Error != nil {
			return nextDone, serverError(method, he.Response.Error)
		}
		return nextDone, err
	}
	if again, aerr := s.authorize(ctx, method, err, &cs.auths); aerr != nil {
		// The server refused the attempt (401/403): it did not run, and it
		// is not sent again; the attempts before decide what may have.
		he, _ := errors.AsType[*transport.HTTPError](err)
		return nextDone, s.notSentAgain(cs, "the server answered HTTP "+strconv.Itoa(he.StatusCode)+" to it", aerr)
	} else if again {
		// The server refused the credentials (expired token, scope
		// step-up, a new authorization server) and did not take the
		// request: re-send it with the new ones.
		cs.why = "reauthorize"
		return nextResend, nil
	}
	if l, ok := classify(err); ok && ctx.Err() == nil {
		if s.isClosing() {
			// Close ended the request: its callers get ErrClosed.
			return nextDone, ErrClosed
		}
		return s.outcome(ctx, cs, o, l, err)
	}
	if cs.maybeRan > 0 && ctx.Err() == nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrRequestTimeout) {
		// A replay that failed without a loss and without a JSON-RPC
		// answer (refused with an HTTP status that is no loss, a redirect
		// not followed, the token source's failure; answered over the
		// size limit or malformed) says nothing of the attempt before it,
		// which may have run. The caller's context, a timeout and Close
		// are unanswered's.
		why := "sent again, the replay failed: " + err.Error()
		switch he, isHTTP := errors.AsType[*transport.HTTPError](err); {
		case isHTTP:
			why = "sent again, the server answered HTTP " + strconv.Itoa(he.StatusCode) + " to it"
		case answeredTooLarge(err) || errors.Is(err, ErrInvalidResponse):
			// The server answered the replay: it may have run too.
			cs.maybeRan++
			why = "sent again, the server answered it, but the answer could not be read: " + err.Error()
		}
		return nextDone, s.notSentAgain(cs, why, err)
	}
	return nextDone, err
}

// answered reads the server's answer to an attempt: a JSON-RPC error (or
// a re-probe when it contradicts an era hint), a legacy result, or a
// modern result by its resultType (complete, task, input_required).
func (s *Session) answered(ctx context.Context, cs *callState, o *CallOptions, c *call, resp *jsonrpc.Response) (json.RawMessage, afterAttempt, error) {
	method := cs.method
	n := c.neg
	if resp.Error != nil {
		if !cs.reprobed && s.hintSuspect(c, resp.Error, nil) {
			cs.reprobed = true
			if changed, perr := s.reprobe(ctx, c); perr != nil {
				return nil, nextDone, perr
			} else if changed {
				cs.why = "reprobe"
				return nil, nextResend, nil
			}
		}
		if resp.Error.Code == jsonrpc.CodeURLElicitationRequired && n.era != negotiation.EraModern {
			// 2025-11-25 only (modern servers must not send it).
			if cs.urlElicited {
				return nil, nextDone, urlElicitationError(method, resp.Error)
			}
			if err := s.urlElicit(ctx, method, resp.Error); err != nil {
				return nil, nextDone, err
			}
			cs.urlElicited = true
			return nil, nextResend, nil
		}
		if err := c.failedWith(resp.Error); err != nil { // legacy, after a handler failure (tie.go)
			return nil, nextDone, err
		}
		return nil, nextDone, serverError(method, resp.Error)
	}
	if n.era != negotiation.EraModern {
		return resp.Result, nextDone, nil
	}
	if n.hinted {
		s.hintVerified.Store(true)
	}
	rt, err := resultType(resp.Result)
	if err != nil {
		return nil, nextDone, &ProtocolError{Method: method, Reason: err.Error(), Err: ErrInvalidResponse}
	}
	switch rt {
	case "", protocol.ResultTypeComplete:
		return resp.Result, nextDone, nil
	case protocol.ResultTypeTask:
		if o.AcceptTask && method == protocol.MethodToolsCall || method == protocol.MethodTasksGet {
			// tasks/get: the extension's text says "complete", two of its
			// examples say "task"; both are accepted (OPEN-QUESTIONS 38).
			return resp.Result, nextDone, nil
		}
		return nil, nextDone, &ProtocolError{Method: method, Reason: `resultType "task" was not accepted for this request`, Err: ErrInvalidResponse}
	case protocol.ResultTypeInputRequired:
		if err := s.nextRound(ctx, cs, o, resp.Result); err != nil {
			return nil, nextDone, err
		}
		return nil, nextRound, nil
	}
	return nil, nextDone, &ProtocolError{Method: method, Reason: fmt.Sprintf("unknown resultType %q", rt), Err: ErrInvalidResponse}
}

// nextRound fulfils one MRTR round (spec 2026-07-28: multi-round-trip
// requests) and sets the params of the retry in cs.cur.
func (s *Session) nextRound(ctx context.Context, cs *callState, o *CallOptions, result json.RawMessage) error {
	method := cs.method
	if !mrtrMethod(method) {
		return &ProtocolError{Method: method, Reason: "input_required is not allowed for this method", Err: ErrInvalidResponse}
	}
	cs.rounds++
	if cs.rounds > s.cfg.MaxInputRounds {
		return &ProtocolError{Method: method, Reason: fmt.Sprintf("more than %d rounds", s.cfg.MaxInputRounds), Err: ErrTooManyInputRounds}
	}
	ir, err := s.parseInputRequired(method, result)
	if err != nil {
		return err
	}
	if o.ManualInput && len(ir.keys) > 0 {
		return ir.pending(method, cs)
	}
	next, err := s.inputRound(ctx, method, cs.raw, ir)
	if err != nil {
		return err
	}
	if len(ir.keys) == 0 {
		// A round with requestState alone (load shedding): paced.
		if cs.pace == nil {
			cs.pace = newPacer()
		}
		if err := cs.pace.wait(ctx, s.closing()); err != nil {
			return err
		}
	}
	if o.OnInputRound != nil {
		o.OnInputRound(cs.rounds)
	}
	s.emit(Event{Kind: EventInputRound, Version: s.ProtocolVersion(), Method: method, Count: cs.rounds})
	cs.cur = next
	return nil
}

// authorize handles an HTTP 401 or 403 answer to a request: it calls
// Config.Authorize (on the caller's goroutine, so unrelated calls go on)
// and reports that the request should be re-sent, at most
// maxCallAuthAttempts times per request (*auths counts). Without
// Authorize, or when the attempts are used up, the error is an
// [*AuthRequiredError]. Other errors are left alone (false, nil).
func (s *Session) authorize(ctx context.Context, method string, err error, auths *int) (bool, error) {
	he, ok := errors.AsType[*transport.HTTPError](err)
	if !ok || !authStatus(he.StatusCode) {
		return false, nil
	}
	if s.cfg.Authorize == nil || *auths >= maxCallAuthAttempts {
		return false, authError(he.StatusCode, he)
	}
	*auths++
	s.log.Info("authorizing again", "method", method, "status", he.StatusCode, "attempt", *auths)
	if aerr := s.cfg.Authorize(ctx, he); aerr != nil {
		return false, fmt.Errorf("authorizing: %w", joinErrs(aerr, authError(he.StatusCode, he)))
	}
	return true, nil
}

func authStatus(code int) bool {
	return code == http.StatusUnauthorized || code == http.StatusForbidden
}

// serverError turns a server's error response into the error Call returns.
func serverError(method string, e *jsonrpc.Error) error {
	if e.Code == jsonrpc.CodeMissingRequiredClientCapability {
		var data struct {
			Required protocol.ClientCapabilities `json:"requiredCapabilities"`
		}
		_ = json.Unmarshal(e.Data, &data) // malformed data: no detail
		return &MissingCapabilityError{Method: method, Required: data.Required, Err: e}
	}
	return e
}

func mrtrMethod(method string) bool {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead:
		return true
	}
	return false
}

// answeredTooLarge reports whether the request was lost because its
// answer was over the transport's size limit. The server then did run it,
// and re-sending would run it again only to meet the same limit, so such a
// request is never replayed.
func answeredTooLarge(err error) bool {
	_, ok := errors.AsType[*transport.MessageTooLargeError](err)
	return ok
}

// attempt registers c, writes one request with params and waits for its
// response. The limits of tm hold from the attempt's start: the wait for
// registration and the write count (a Streamable HTTP server that holds
// its headers or trickles a JSON body is inside Write).
func (s *Session) attempt(ctx context.Context, c *call, params json.RawMessage, o *CallOptions, tm *timing) (*jsonrpc.Response, error) {
	c.settled = false
	s.streamBefore(ctx, c.method)
	now := time.Now()
	at, limitErr := tm.bound(c.method, now)
	wctx := ctx
	if !at.IsZero() {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadlineCause(ctx, at, limitErr)
		defer cancel()
	}
	werr, err := s.send(wctx, c, &sendSpec{params: params, level: o.LogLevel, headers: o.Headers})
	if err != nil {
		return nil, limitHit(ctx, wctx, err)
	}
	if werr != nil {
		if ctx.Err() != nil || wctx.Err() != nil {
			return nil, limitHit(ctx, wctx, werr)
		}
		return s.writeFailed(c, werr)
	}
	var idle, first, deadline time.Duration
	if tm.idle > 0 {
		idle, first = tm.idle, max(time.Until(now.Add(tm.idle)), 1)
	}
	if tm.deadline > 0 {
		deadline = max(time.Until(tm.start.Add(tm.deadline)), 1)
	}
	r, err := s.awaitTimed(ctx, c, first, idle, deadline, true)
	if err != nil {
		if te, ok := errors.AsType[*RequestTimeoutError](err); ok {
			// Report the configured limit, not what was left of it.
			if te.Absolute {
				te.Timeout = tm.deadline
			} else {
				te.Timeout = tm.idle
			}
		}
		return nil, err
	}
	c.settled = true
	if r.err != nil {
		return nil, r.err
	}
	if r.flushed != nil {
		// Deliver the progress and log notifications that came before
		// the response first. The result wins over a ctx that ends
		// meanwhile; the dispatcher stops on Close.
		select {
		case <-r.flushed:
		case <-ctx.Done():
		case <-s.closing():
		}
	}
	return r.resp, nil
}

// limitHit returns the call's timeout error when err is wctx ending at one
// of the call's limits while the caller's ctx goes on, else err.
func limitHit(ctx, wctx context.Context, err error) error {
	if ctx.Err() == nil && wctx.Err() != nil {
		if te, ok := errors.AsType[*RequestTimeoutError](context.Cause(wctx)); ok {
			return te
		}
	}
	return err
}

// buildRequest encodes c's request with params: in the modern era with the
// spliced _meta, in the legacy era with _meta.progressToken only when a
// token is in use.
func (s *Session) buildRequest(c *call, params json.RawMessage, level protocol.LoggingLevel) (*jsonrpc.Request, error) {
	body := params
	var err error
	switch {
	case c.neg.era == negotiation.EraModern:
		body, err = spliceMeta(c.buf[:0], params, c.neg.prefix, c.token, level)
	case c.token != 0:
		body, err = spliceMeta(c.buf[:0], params, nil, c.token, "")
	}
	if err != nil {
		return nil, fmt.Errorf("encoding the params: %w", err)
	}
	if len(body) > 0 && (len(params) == 0 || &body[0] != &params[0]) {
		c.buf = body
	}
	c.req = jsonrpc.Request{ID: jsonrpc.Int64ID(c.id), Method: c.method, Params: body}
	return &c.req, nil
}

// await waits for c's next result. timeout (reset on progress) and max
// bound the wait when positive. On ctx end or timeout the call is
// abandoned; written says whether the server must be told.
func (s *Session) await(ctx context.Context, c *call, timeout, max time.Duration, written bool) (callResult, error) {
	return s.awaitTimed(ctx, c, timeout, timeout, max, written)
}

// awaitTimed is await whose idle timer first runs for first, then for
// timeout after each progress.
func (s *Session) awaitTimed(ctx context.Context, c *call, first, timeout, max time.Duration, written bool) (callResult, error) {
	var tC, mC <-chan time.Time
	var t *time.Timer
	if timeout > 0 {
		t = time.NewTimer(first)
		defer t.Stop()
		tC = t.C
	}
	if max > 0 {
		m := time.NewTimer(max)
		defer m.Stop()
		mC = m.C
	}
	var progressed chan struct{}
	if written {
		progressed = c.progressed
	}
	for {
		select {
		case r := <-c.ch:
			return r, nil
		case <-progressed:
			if t != nil {
				t.Reset(timeout)
			}
		case <-tC:
			s.post(event{kind: evAbandon, call: c, cancel: written, reason: "timeout"})
			return callResult{}, &RequestTimeoutError{Method: c.method, Timeout: timeout}
		case <-mC:
			s.post(event{kind: evAbandon, call: c, cancel: written, reason: "timeout"})
			return callResult{}, &RequestTimeoutError{Method: c.method, Timeout: max, Absolute: true}
		case <-ctx.Done():
			// A result that is ready wins over the context (habit 22).
			select {
			case r := <-c.ch:
				if !r.registered {
					return r, nil
				}
			default:
			}
			s.post(event{kind: evAbandon, call: c, cancel: written, reason: context.Cause(ctx).Error()})
			return callResult{}, ctx.Err()
		case <-s.loopEnded():
			select {
			case r := <-c.ch:
				return r, nil
			default:
			}
			return callResult{}, ErrClosed
		}
	}
}

// cancelRemote tells the server that request id on ref is abandoned. It
// runs on the loop and never blocks: on modern HTTP it closes the response
// stream (which is the cancellation there); elsewhere a tracked goroutine
// sends notifications/cancelled, bounded by CancelNotifyTimeout, and a
// connection that can abandon the request's response stream (legacy
// Streamable HTTP) is told to, so that it stops reading and resuming it.
func (s *Session) cancelRemote(ref *connRef, id int64, reason string) {
	if ref == nil {
		return
	}
	sc, canStream := ref.conn.(transport.StreamCanceler)
	n := s.pub.Load().neg
	if n != nil && n.era == negotiation.EraModern && canStream && ref.kind == transport.KindHTTP {
		sc.CancelStream(jsonrpc.Int64ID(id))
		return
	}
	if canStream {
		sc.CancelStream(jsonrpc.Int64ID(id))
	}
	if s.dctx.Context.Err() != nil {
		return
	}
	params, _ := json.Marshal(struct {
		RequestID int64  `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}{id, reason})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.dctx.Context, CancelNotifyTimeout)
		defer cancel()
		err := s.noteThrough(ctx, protocol.NotificationCancelled, params, false, func(ctx context.Context, method string, params json.RawMessage) error {
			return s.write(ctx, ref, &jsonrpc.Request{Method: method, Params: params})
		})
		if err != nil {
			s.log.Debug("sending notifications/cancelled", "id", id, "err", err)
		}
	}()
}

// perRequest reports whether a network error on a connection of this kind
// concerns one request only (Streamable HTTP and HTTP+SSE POSTs), rather
// than the whole connection (stdio, WebSocket, memory). This is not the
// probe classifier's class (see probeClass).
func perRequest(kind string) bool {
	return kind == transport.KindHTTP || kind == transport.KindSSE
}
