package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// driver is one negotiation (Connect's, or a heal's). The loop owns it
// and sequences its steps: every step's I/O (a probe, initialize, a
// connect, the Authorize hook, a backoff wait) runs on a short-lived
// goroutine (spawn) whose outcome comes back to the loop as an evStep
// event; there the driver asks package negotiation what the outcome
// means and starts the next step (DESIGN.md, "The connection engine").
// The loop never blocks on the I/O, and no step calls the next on the
// stack of an I/O goroutine.
type driver struct {
	s     *Session
	ctx   context.Context     // bounds the negotiation's I/O
	t     transport.Transport // the transport in use (the Fallback after a fallback)
	trace []TraceStep
	// out is the negState the driver will publish once ready; its
	// traceBuf is trace's first array (see step), so that a connected
	// session keeps its trace without keeping the driver.
	out       *negState
	fellBack  error // the request that made the driver fall back to HTTP+SSE; nil before
	initAuths int   // Authorize calls after initialize was answered 401/403
	// probeSt holds the probe step's state (in the driver, not an
	// allocation of its own: the steps run one at a time, and a new probe
	// step starts only once the one before it gave its verdict).
	probeSt probeState
	// retried: Connect's negotiation failed once from an era hint and
	// runs again without it (see begin); a field, not a variable the
	// finish closure would move to the heap.
	retried bool
	// beginning: Connect's goroutine plays the loop's part (see held).
	beginning bool
	// prefix is the _meta members modernOn built last, for prefixAt: the
	// probe's and the pinned era's are the same bytes (the session's
	// capabilities and client info do not change), built once.
	prefix   []byte
	prefixAt string
	// finish receives the negotiation's outcome, once, on the loop: nil
	// once the session is ready.
	finish func(err error)
	// worker, for Connect's negotiation, hands the steps' I/O to
	// Connect's goroutine, which waits for the outcome anyway (see
	// Session.start): no goroutine is started per step, whose stack would
	// grow anew into net/http or os/exec each time. nil for a heal. held
	// is the next step's I/O while Connect's goroutine plays the loop's
	// part (while beginning is set; see Session.start).
	worker chan stepIO
	held   stepIO
}

// stepIO is the I/O of one negotiation step (see spawn).
type stepIO func() (next, undo func())

// stepKind is what the driver does next.
type stepKind uint8

const (
	// stepReady: the negotiation is over; the session is ready.
	stepReady stepKind = iota
	// stepProbe: send server/discover (versions, fallback) and follow the
	// classifier's verdicts. Next: modern, initialize, reconnect.
	stepProbe
	// stepInitialize: the legacy handshake (version, exact, mayReprobe).
	// Next: ready, initialize again (after Authorize or the HTTP+SSE
	// fallback), probe (a modern error answered a hinted initialize).
	stepInitialize
	// stepModern: pin the modern era (version, disc, hinted). Next: ready.
	stepModern
	// stepReconnect: the stdio server exited during the probe: respawn it.
	// Next: initialize.
	stepReconnect
)

// step is one negotiation step with its arguments.
type step struct {
	kind stepKind
	// stepProbe
	versions []string
	fallback bool
	// stepInitialize, stepModern
	version string
	// stepInitialize: exact demands the server answer with exactly
	// version (legacy pin); mayReprobe allows one probe when the server
	// answers with a modern error (the era hint was wrong).
	exact, mayReprobe bool
	// stepModern
	disc   *negotiation.DiscoverResult
	hinted bool
}

func probeStep(versions []string, fallback bool) step {
	return step{kind: stepProbe, versions: versions, fallback: fallback}
}

func initStep(version string, exact, mayReprobe bool) step {
	return step{kind: stepInitialize, version: version, exact: exact, mayReprobe: mayReprobe}
}

// run starts step st. It runs on the loop, and returns once st's I/O is
// under way (or the negotiation is over).
func (d *driver) run(st step) {
	switch st.kind {
	case stepReady:
		d.finish(nil)
	case stepProbe:
		d.probe(st.versions, st.fallback)
	case stepInitialize:
		d.initialize(st)
	case stepModern:
		if err := d.finishModern(st.version, st.disc, st.hinted); err != nil {
			d.fail(err)
			return
		}
		d.finish(nil)
	case stepReconnect:
		d.reconnect(func() { d.run(initStep(protocol.LatestLegacyVersion, false, false)) })
	default:
		panic("session: unknown negotiation step")
	}
}

// fail ends the negotiation with err. It runs on the loop.
func (d *driver) fail(err error) {
	if d.fellBack != nil {
		err = &fallbackError{first: d.fellBack, fallback: err}
	}
	d.finish(err)
}

// spawn runs io on a short-lived goroutine; the function io returns runs
// next on the loop, as an evStep event. If the loop ended first, undo
// (when io returned one) releases what io acquired: only then does the
// goroutine wait for the loop to have run next; otherwise it posts next
// and ends (a step the loop never runs, because it ended, holds nothing).
//
// During Connect the I/O runs on Connect's goroutine instead when it is
// free: while it plays the loop's part, each step's (held until start
// runs it), and later ones that the idle Connect takes from worker.
func (d *driver) spawn(io stepIO) {
	s := d.s
	if d.worker != nil {
		if d.beginning && d.held == nil {
			d.held = io
			return
		}
		select {
		case d.worker <- io:
			return
		default:
		}
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		d.runIO(io)
	}()
}

// runIO runs io and hands what it returns to the loop (see spawn).
func (d *driver) runIO(io stepIO) {
	next, undo := io()
	ev := event{kind: evStep, step: next}
	if undo == nil {
		d.s.post(ev)
	} else if err := d.s.ask(ev); err != nil {
		undo()
	}
}

// step records st in the trace (room for a connect's usual steps, a
// probe and initialize after it, in the negState it will publish: see
// ready) and logs it at Debug, boxing its strings only when that is on.
func (d *driver) step(st TraceStep) {
	if d.trace == nil {
		if d.out == nil {
			d.out = new(negState)
		}
		d.trace = d.out.traceBuf[:0]
	}
	d.trace = append(d.trace, st)
	if d.s.log.Enabled(d.ctx, slog.LevelDebug) {
		d.s.log.Debug("negotiation step", "step", st.Step, "sent", st.Sent, "outcome", st.Outcome, "verdict", st.Verdict, "err", st.Err)
	}
}

// initial is the first step of the configured mode.
func (d *driver) initial() (step, error) {
	cfg := &d.s.cfg
	switch cfg.Mode {
	case ModeAuto:
		switch cfg.EraHint {
		case negotiation.EraModern:
			v := cfg.VersionHint
			if negotiation.EraOf(v) != negotiation.EraModern {
				v = negotiation.ModernVersions()[0]
			}
			d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era cache: modern " + v, Verdict: "modern"})
			return step{kind: stepModern, version: v, disc: cfg.DiscoverHint, hinted: true}, nil
		case negotiation.EraLegacy:
			v := cfg.VersionHint
			if !d.s.speaksLegacy(v) {
				v = protocol.LatestLegacyVersion
			}
			d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era cache: legacy " + v, Verdict: "legacy"})
			return initStep(v, false, true), nil
		}
		return probeStep(d.s.versions(), true), nil
	case ModeModern:
		return probeStep(negotiation.ModernVersions(), false), nil
	case ModeLegacy:
		return initStep(protocol.LatestLegacyVersion, false, false), nil
	case ModePinned:
		switch negotiation.EraOf(cfg.PinVersion) {
		case negotiation.EraModern:
			return probeStep([]string{cfg.PinVersion}, false), nil
		case negotiation.EraLegacy:
			if !d.s.speaksLegacy(cfg.PinVersion) && negotiation.IsOlder(cfg.PinVersion) {
				return step{}, &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "pinned version " + strconv.Quote(cfg.PinVersion) + " is an older version spoken only with " + OlderVersionsOption}
			}
			return initStep(cfg.PinVersion, true, false), nil
		}
		return step{}, &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "pinned version " + strconv.Quote(cfg.PinVersion) + " is not a protocol version"}
	}
	return step{}, fmt.Errorf("unknown mode %v", cfg.Mode)
}

// probeClass maps a connection's transport class to the classifier's
// (seed 003): only the stdio child process is stdio-like; WebSocket, the
// in-memory pipe and both HTTP transports are HTTP, so a probe timeout
// there is a retried, typed error, never a legacy verdict. (The two enums
// exist because negotiation imports neither transport nor the reverse;
// DESIGN.md, "Layout".)
func probeClass(ref *connRef) negotiation.TransportKind {
	if ref.class == transport.ClassStdio {
		return negotiation.TransportStdio
	}
	return negotiation.TransportHTTP
}

// probeState is what one probe step remembers between its attempts (the
// corrective re-probe, Authorize, retries): the loop guard and the retry
// budget live here, not in the pure classifier.
type probeState struct {
	versions  []string
	version   string // the version the next probe carries
	fallback  bool
	corrected bool // the corrective re-probe ran
	auths     int
	started   time.Time // when the step started: the retries' time budget counts from here
	retry     *retrier  // made by the first retry verdict
}

// probe starts the probe step: server/discover until the classifier's
// verdict names the next step or a typed error ends the negotiation.
// Corrective, Authorize and Retry verdicts probe again within this step.
func (d *driver) probe(versions []string, fallback bool) {
	d.s.setState(StateProbing)
	d.probeSt = probeState{versions: versions, fallback: fallback, started: time.Now()}
	ps := &d.probeSt
	for _, v := range versions {
		if negotiation.EraOf(v) == negotiation.EraModern {
			ps.version = v
			break
		}
	}
	if ps.version == "" {
		d.fail(&negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: negotiation.ReasonNoCommonVersion})
		return
	}
	d.probeAgain()
}

// probeAgain sends one server/discover of the probe step in progress;
// probed reads its outcome on the loop.
func (d *driver) probeAgain() {
	ref := d.s.lp.ref
	params, err := d.probeParams(ref, d.probeSt.version)
	if err != nil {
		d.fail(err)
		return
	}
	pc := negotiation.ProbeContext{
		ClientVersions:    d.probeSt.versions,
		RequestedVersion:  d.probeSt.version,
		FallbackAvailable: d.probeSt.fallback,
		Transport:         probeClass(ref),
	}
	d.spawn(func() (func(), func()) {
		o, he, err := d.probeOnce(ref, params, pc.FallbackAvailable)
		if err != nil {
			return func() { d.fail(err) }, nil
		}
		// The classifier is pure: it reads the outcome here, off the
		// loop, with the I/O (a result is parsed in full), and the loop
		// only starts what the verdict names.
		v := negotiation.ClassifyProbe(pc, o)
		return func() { d.probed(ref, o, v, he) }, nil
	})
}

// probed starts what the verdict v of one probe's outcome o names. It
// runs on the loop.
func (d *driver) probed(ref *connRef, o negotiation.Outcome, v negotiation.Verdict, he *transport.HTTPError) {
	ps := &d.probeSt
	d.traceProbe(ps.version, o, v)
	d.onVerdict(ps, ref, v, he)
}

// sentLine is a trace step's Sent for a request of method at version, or
// its Outcome for an initialize result ("result") at version: the usual
// ones are constants, so that a connect's trace costs no concatenation.
func sentLine(method, version string) string {
	switch {
	case method == "result" && version == protocol.LatestLegacyVersion:
		return "result " + protocol.LatestLegacyVersion
	case method == protocol.MethodDiscover && version == protocol.LatestVersion:
		return protocol.MethodDiscover + " " + protocol.LatestVersion
	case method == protocol.MethodInitialize && version == protocol.LatestLegacyVersion:
		return protocol.MethodInitialize + " " + protocol.LatestLegacyVersion
	}
	return method + " " + version
}

func (d *driver) traceProbe(version string, o negotiation.Outcome, v negotiation.Verdict) {
	st := TraceStep{Step: "probe", Sent: sentLine(protocol.MethodDiscover, version), Outcome: describeOutcome(o), Verdict: v.Kind.String()}
	if v.Reason != "" {
		st.Verdict += " (" + v.Reason + ")"
	}
	if v.Err != nil && v.Kind == negotiation.VerdictError {
		st.Err = v.Err.Error()
	}
	d.step(st)
}

// onVerdict starts what a probe verdict names: the next step, or another
// probe within the step. It runs on the loop.
func (d *driver) onVerdict(ps *probeState, ref *connRef, v negotiation.Verdict, he *transport.HTTPError) {
	switch v.Kind {
	case negotiation.VerdictModern:
		d.run(step{kind: stepModern, version: v.Version, disc: v.Discover})
	case negotiation.VerdictCorrective:
		if ps.corrected {
			// The loop guard: the corrective re-probe runs exactly once.
			d.fail(v.Err)
			return
		}
		ps.corrected, ps.version = true, v.Version
		d.probeAgain()
	case negotiation.VerdictLegacy:
		lv := v.Version
		if negotiation.EraOf(lv) != negotiation.EraLegacy {
			lv = protocol.LatestLegacyVersion
		}
		d.run(initStep(lv, false, false))
	case negotiation.VerdictReconnect:
		d.run(step{kind: stepReconnect})
	case negotiation.VerdictAuthorize:
		d.authorize(&ps.auths, maxAuthAttempts, v.Status, he, "probe again", d.probeAgain)
	case negotiation.VerdictRetry:
		d.retryProbe(ps, ref, v, he)
	case negotiation.VerdictError:
		d.fail(v.Err)
	default:
		d.fail(fmt.Errorf("unknown verdict %v", v.Kind))
	}
}

// authorize runs the Authorize hook (user code, off the loop) after a
// 401/403, at most max times per step (counted in *n), then next.
func (d *driver) authorize(n *int, max, status int, he *transport.HTTPError, then string, next func()) {
	s := d.s
	if s.cfg.Authorize == nil || *n >= max {
		d.fail(authError(status, he))
		return
	}
	*n++
	d.spawn(func() (func(), func()) {
		err := s.cfg.Authorize(d.ctx, he)
		return func() {
			d.step(TraceStep{Step: "authorize", Sent: "Authorize hook", Outcome: errText(err), Verdict: then})
			if err != nil {
				d.fail(fmt.Errorf("authorizing: %w", joinErrs(err, authError(status, he))))
				return
			}
			next()
		}, nil
	})
}

// retryProbe waits before the next probe of a retry verdict (a timer on a
// short-lived goroutine), on a new connection when the connection itself
// ended (a WebSocket or pipe the server closed), or fails once the
// retries are used up. It runs on the loop.
func (d *driver) retryProbe(ps *probeState, ref *connRef, v negotiation.Verdict, he *transport.HTTPError) {
	var after time.Duration
	if he != nil {
		after = he.RetryAfter
	}
	if ps.retry == nil {
		ps.retry = newRetrier(d.s.cfg.Retry)
		ps.retry.start = ps.started
	}
	wait, ok := ps.retry.next(after)
	if !ok {
		cause := v.Err
		if cause == nil && he != nil {
			cause = he
		}
		if cause == nil {
			cause = errors.New(v.Reason)
		}
		d.fail(&negotiation.Error{Kind: negotiation.KindTransport, Reason: "retries exhausted (" + v.Reason + ")", Status: v.Status, Err: cause})
		return
	}
	d.step(TraceStep{Step: "retry", Sent: "wait " + wait.String(), Outcome: v.Reason, Verdict: "probe again"})
	d.s.emit(Event{Kind: EventRetried, Method: protocol.MethodDiscover, Err: errors.New(v.Reason)})
	d.spawn(func() (func(), func()) {
		err := d.s.sleep(d.ctx, wait)
		return func() {
			switch {
			case err != nil:
				d.fail(err)
			case ref.lost.Load():
				d.reconnect(d.probeAgain)
			default:
				d.probeAgain()
			}
		}, nil
	})
}

func authError(status int, he *transport.HTTPError) *AuthRequiredError {
	e := &AuthRequiredError{Status: status, Err: he}
	if he != nil {
		e.Challenge = he.WWWAuthenticate
	}
	return e
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

func describeOutcome(o negotiation.Outcome) string {
	switch o.Kind {
	case negotiation.OutcomeRPCError:
		if o.Error != nil {
			return "rpc-error " + strconv.FormatInt(o.Error.Code, 10)
		}
	case negotiation.OutcomeHTTP:
		return "http " + strconv.Itoa(o.Status)
	case negotiation.OutcomeExited, negotiation.OutcomeTransportError:
		if o.Err != nil {
			return o.Kind.String() + ": " + o.Err.Error()
		}
	}
	return o.Kind.String()
}

// probeParams readies ref for a probe at version and returns its params.
func (d *driver) probeParams(ref *connRef, version string) (json.RawMessage, error) {
	prefix, err := d.modernOn(ref, version)
	if err != nil {
		return nil, err
	}
	params, _ := spliceMeta(nil, nil, prefix, 0, "")
	return params, nil
}

// probeOnce sends one server/discover with params on ref and normalizes
// what happened; fallback says whether legacy evidence falls back to
// initialize (Message.Fallback). It runs off the loop. A non-nil error
// means the negotiation must stop (ctx ended, session closed).
func (d *driver) probeOnce(ref *connRef, params json.RawMessage, fallback bool) (negotiation.Outcome, *transport.HTTPError, error) {
	s := d.s
	ctx := d.ctx
	pctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	var resp *jsonrpc.Response
	var err error
	if s.cfg.Middleware == nil {
		resp, err = d.rpcOnce(pctx, protocol.MethodDiscover, params, nil) // no Message to make
	} else {
		resp, err = d.rpcMessage(pctx, &Message{Method: protocol.MethodDiscover, Params: params, Negotiation: true, Fallback: fallback})
	}
	switch {
	case err == nil && resp.Error == nil:
		return negotiation.Outcome{Kind: negotiation.OutcomeResult, Result: resp.Result}, nil, nil
	case err == nil:
		return negotiation.Outcome{Kind: negotiation.OutcomeRPCError, Error: resp.Error}, nil, nil
	case ctx.Err() != nil:
		return negotiation.Outcome{}, nil, ctx.Err()
	case errors.Is(err, ErrClosed):
		return negotiation.Outcome{}, nil, err
	case errors.Is(err, context.DeadlineExceeded) && pctx.Err() != nil:
		return negotiation.Outcome{Kind: negotiation.OutcomeTimeout, Err: err}, nil, nil
	}
	if ref.class == transport.ClassStdio {
		// On the stdio child process a connection that ends during the
		// probe is a server that went away: the stdio "exited" row
		// (respawn, then initialize). Elsewhere (WebSocket, memory) a
		// dropped connection is the HTTP class's network error: retried
		// on a new connection (see retryProbe), never a downgrade.
		_, netErr := errors.AsType[*transport.NetworkError](err)
		if netErr || errors.Is(err, transport.ErrClosed) || errors.Is(err, ErrConnectionLost) {
			return negotiation.Outcome{Kind: negotiation.OutcomeExited, Err: err}, nil, nil
		}
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok {
		return negotiation.Outcome{Kind: negotiation.OutcomeHTTP, Status: he.StatusCode, ContentType: he.ContentType, Body: he.Body, Response: he.Response}, he, nil
	}
	return negotiation.Outcome{Kind: negotiation.OutcomeTransportError, Err: err}, nil, nil
}

// rpc sends one negotiation request on the current connection and waits
// for the response. It takes the session's one send path (send, then
// await) as a call marked internal, which registers on the current
// connection even before a ready state (directly in the pending table,
// like a plain call, and the reader hands it its response). It is never cancelled
// on the wire: initialize must not be, and a timed-out probe is legacy
// evidence, not something to cancel before initialize.
//
// With a middleware, the request passes through it (Message.Negotiation);
// the negotiation reads the response and the error as they came.
func (d *driver) rpc(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	if d.s.cfg.Middleware == nil {
		return d.rpcOnce(ctx, method, params, nil) // no Message to make
	}
	return d.rpcMessage(ctx, &Message{Method: method, Params: params, Negotiation: true})
}

// rpcMessage is rpc of the negotiation message m through the session's
// middleware (Config.Middleware, not nil).
func (d *driver) rpcMessage(ctx context.Context, m *Message) (*jsonrpc.Response, error) {
	var (
		resp *jsonrpc.Response
		rerr error
	)
	_, err := d.s.through(ctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		resp, rerr = d.rpcOnce(ctx, m.Method, m.Params, &m.ID)
		switch {
		case rerr != nil:
			return nil, rerr
		case resp.Error != nil:
			return nil, resp.Error
		}
		return resp.Result, nil
	})
	switch {
	case resp != nil:
		return resp, nil
	case rerr != nil:
		return nil, rerr
	case err == nil:
		err = errors.New("a middleware answered a negotiation request without sending it")
	}
	return nil, err
}

// rpcOnce sends one negotiation request (see rpc); id, when not nil,
// receives its id.
func (d *driver) rpcOnce(ctx context.Context, method string, params json.RawMessage, id *jsonrpc.ID) (*jsonrpc.Response, error) {
	s := d.s
	c := newCall(method)
	if id != nil {
		defer func() { *id = jsonrpc.Int64ID(c.id) }()
	}
	c.internal, c.noCancel = true, true
	werr, err := s.send(ctx, c, &sendSpec{params: params, verbatim: true})
	if err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	r, err := s.await(ctx, c, 0, 0, true)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.resp, nil
}

// modernOn readies ref for modern requests at version (the HTTP
// MCP-Protocol-Version header) and returns the constant _meta members.
func (d *driver) modernOn(ref *connRef, version string) ([]byte, error) {
	if pvs, ok := ref.conn.(transport.ProtocolVersionSetter); ok {
		pvs.SetProtocolVersion(version)
	}
	if d.prefix != nil && d.prefixAt == version {
		return d.prefix, nil
	}
	prefix, err := buildPrefix(version, d.s.modernCaps, *d.s.cfg.ClientInfo)
	if err != nil {
		return nil, err
	}
	d.prefix, d.prefixAt = prefix, version
	return prefix, nil
}

// finishModern pins the modern era at version. It runs on the loop.
func (d *driver) finishModern(version string, disc *negotiation.DiscoverResult, hinted bool) error {
	s := d.s
	ref := s.lp.ref
	prefix, err := d.modernOn(ref, version)
	if err != nil {
		return err
	}
	n := d.ready(negState{
		era: negotiation.EraModern, version: version, discover: disc, prefix: prefix,
		hinted: hinted, kind: ref.kind, transport: d.t,
	})
	s.becomeReady(n, StateModern)
	return nil
}

// ready returns the negState to publish: v with the driver's trace, in
// the negState whose traceBuf step made the trace's first array (or a
// new one). A driver publishes at most one.
func (d *driver) ready(v negState) *negState {
	n := d.out
	d.out = nil
	if n == nil {
		n = new(negState)
	}
	v.traceBuf = n.traceBuf
	v.trace = d.trace
	*n = v
	return n
}
