package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// driver runs the negotiation steps: on Connect's goroutine at first, on a
// healer goroutine after a lost connection. It does the blocking I/O; the
// loop keeps the state, which the driver changes by asking it with typed
// events (evEnter, evInstall, evReady).
//
// The steps never call each other: each returns the step to run next, and
// run is the only place that sequences them (DESIGN.md, "The connection
// engine"). What a probe outcome means is decided by package negotiation.
type driver struct {
	s         *Session
	t         transport.Transport // the transport in use (the Fallback after a fallback)
	trace     []TraceStep
	fellBack  error // the request that made the driver fall back to HTTP+SSE; nil before
	initAuths int   // Authorize calls after initialize was answered 401/403
}

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

// run runs steps from first until the session is ready or a step fails.
func (d *driver) run(ctx context.Context, first step) error {
	st := first
	for {
		var err error
		switch st.kind {
		case stepReady:
			return nil
		case stepProbe:
			st, err = d.probe(ctx, st.versions, st.fallback)
		case stepInitialize:
			st, err = d.initialize(ctx, st)
		case stepModern:
			st, err = step{kind: stepReady}, d.finishModern(st.version, st.disc, st.hinted)
		case stepReconnect:
			st, err = initStep(protocol.LatestLegacyVersion, false, false), d.reconnect(ctx)
		default:
			panic("session: unknown negotiation step")
		}
		if err != nil {
			if d.fellBack != nil {
				return &fallbackError{first: d.fellBack, fallback: err}
			}
			return err
		}
	}
}

func (d *driver) step(st TraceStep) {
	d.trace = append(d.trace, st)
	d.s.log.Debug("negotiation step", "step", st.Step, "sent", st.Sent, "outcome", st.Outcome, "verdict", st.Verdict, "err", st.Err)
}

func (d *driver) setState(st State) error {
	return d.s.ask(event{kind: evEnter, st: st})
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
			if !slices.Contains(negotiation.LegacyVersions(), v) {
				v = protocol.LatestLegacyVersion
			}
			d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era cache: legacy " + v, Verdict: "legacy"})
			return initStep(v, false, true), nil
		}
		return probeStep(negotiation.Versions(), true), nil
	case ModeModern:
		return probeStep(negotiation.ModernVersions(), false), nil
	case ModeLegacy:
		return initStep(protocol.LatestLegacyVersion, false, false), nil
	case ModePinned:
		switch negotiation.EraOf(cfg.PinVersion) {
		case negotiation.EraModern:
			return probeStep([]string{cfg.PinVersion}, false), nil
		case negotiation.EraLegacy:
			return initStep(cfg.PinVersion, true, false), nil
		}
		return step{}, &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "pinned version " + strconv.Quote(cfg.PinVersion) + " is not a protocol version"}
	}
	return step{}, fmt.Errorf("session: unknown mode %v", cfg.Mode)
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
	fallback  bool
	version   string // the version the next probe carries
	corrected bool   // the corrective re-probe ran
	auths     int
	retry     *retrier
}

// probe sends server/discover until the classifier's verdict names the
// next step or a typed error ends the negotiation. Corrective, Authorize
// and Retry verdicts probe again within this step.
func (d *driver) probe(ctx context.Context, versions []string, fallback bool) (step, error) {
	if err := d.setState(StateProbing); err != nil {
		return step{}, err
	}
	ps := &probeState{versions: versions, fallback: fallback, retry: newRetrier(d.s.cfg.Retry)}
	for _, v := range versions {
		if negotiation.EraOf(v) == negotiation.EraModern {
			ps.version = v
			break
		}
	}
	if ps.version == "" {
		return step{}, &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: negotiation.ReasonNoCommonVersion}
	}
	for {
		ref := d.s.pub.Load().ref
		o, he, err := d.probeOnce(ctx, ps.version)
		if err != nil {
			return step{}, err
		}
		v := negotiation.ClassifyProbe(negotiation.ProbeContext{
			ClientVersions:    ps.versions,
			RequestedVersion:  ps.version,
			FallbackAvailable: ps.fallback,
			Transport:         probeClass(ref),
		}, o)
		d.traceProbe(ps.version, o, v)
		next, again, err := d.onVerdict(ctx, ps, ref, v, he)
		if err != nil || !again {
			return next, err
		}
	}
}

func (d *driver) traceProbe(version string, o negotiation.Outcome, v negotiation.Verdict) {
	st := TraceStep{Step: "probe", Sent: protocol.MethodDiscover + " " + version, Outcome: describeOutcome(o), Verdict: v.Kind.String()}
	if v.Reason != "" {
		st.Verdict += " (" + v.Reason + ")"
	}
	if v.Err != nil && v.Kind == negotiation.VerdictError {
		st.Err = v.Err.Error()
	}
	d.step(st)
}

// onVerdict maps a probe verdict to the next step, or (again) to another
// probe within the step.
func (d *driver) onVerdict(ctx context.Context, ps *probeState, ref *connRef, v negotiation.Verdict, he *transport.HTTPError) (next step, again bool, err error) {
	switch v.Kind {
	case negotiation.VerdictModern:
		return step{kind: stepModern, version: v.Version, disc: v.Discover}, false, nil
	case negotiation.VerdictCorrective:
		if ps.corrected {
			// The loop guard: the corrective re-probe runs exactly once.
			return step{}, false, v.Err
		}
		ps.corrected, ps.version = true, v.Version
		return step{}, true, nil
	case negotiation.VerdictLegacy:
		lv := v.Version
		if negotiation.EraOf(lv) != negotiation.EraLegacy {
			lv = protocol.LatestLegacyVersion
		}
		return initStep(lv, false, false), false, nil
	case negotiation.VerdictReconnect:
		return step{kind: stepReconnect}, false, nil
	case negotiation.VerdictAuthorize:
		err := d.authorize(ctx, &ps.auths, maxAuthAttempts, v.Status, he, "probe again")
		return step{}, err == nil, err
	case negotiation.VerdictRetry:
		err := d.retryProbe(ctx, ps, ref, v, he)
		return step{}, err == nil, err
	case negotiation.VerdictError:
		return step{}, false, v.Err
	}
	return step{}, false, fmt.Errorf("session: unknown verdict %v", v.Kind)
}

// authorize runs the Authorize hook after a 401/403, at most max times
// per step (counted in *n).
func (d *driver) authorize(ctx context.Context, n *int, max, status int, he *transport.HTTPError, then string) error {
	s := d.s
	if s.cfg.Authorize == nil || *n >= max {
		return authError(status, he)
	}
	*n++
	err := s.cfg.Authorize(ctx, he)
	d.step(TraceStep{Step: "authorize", Sent: "Authorize hook", Outcome: errText(err), Verdict: then})
	if err != nil {
		return fmt.Errorf("session: authorizing: %w", errors.Join(err, authError(status, he)))
	}
	return nil
}

// retryProbe waits before the next probe of a retry verdict, on a new
// connection when the connection itself ended (a WebSocket or pipe the
// server closed), or fails once the retries are used up.
func (d *driver) retryProbe(ctx context.Context, ps *probeState, ref *connRef, v negotiation.Verdict, he *transport.HTTPError) error {
	var after time.Duration
	if he != nil {
		after = he.RetryAfter
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
		return &negotiation.Error{Kind: negotiation.KindTransport, Reason: "retries exhausted (" + v.Reason + ")", Status: v.Status, Err: cause}
	}
	d.step(TraceStep{Step: "retry", Sent: "wait " + wait.String(), Outcome: v.Reason, Verdict: "probe again"})
	d.s.emit(Event{Kind: EventRetried, Method: protocol.MethodDiscover, Err: errors.New(v.Reason)})
	if err := d.s.sleep(ctx, wait); err != nil {
		return err
	}
	if ref.lost.Load() {
		return d.reconnect(ctx)
	}
	return nil
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

// probeOnce sends one server/discover at version and normalizes what
// happened. A non-nil error means the negotiation must stop (ctx ended,
// session closed).
func (d *driver) probeOnce(ctx context.Context, version string) (negotiation.Outcome, *transport.HTTPError, error) {
	s := d.s
	ref := s.pub.Load().ref
	prefix, err := d.modernOn(ref, version)
	if err != nil {
		return negotiation.Outcome{}, nil, err
	}
	params, _ := spliceMeta(nil, nil, prefix, 0, "")
	pctx, cancel := context.WithTimeout(ctx, s.cfg.ProbeTimeout)
	defer cancel()
	resp, err := d.rpc(pctx, protocol.MethodDiscover, params)
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
// await) as a call marked internal, which the loop registers on the
// current connection even before a ready state. It is never cancelled
// on the wire: initialize must not be, and a timed-out probe is legacy
// evidence, not something to cancel before initialize.
//
// With a middleware, the request passes through it (Message.Negotiation);
// the negotiation reads the response and the error as they came.
func (d *driver) rpc(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	if d.s.cfg.Middleware == nil {
		return d.rpcOnce(ctx, method, params, nil)
	}
	var (
		resp *jsonrpc.Response
		rerr error
	)
	m := &Message{Method: method, Params: params, Negotiation: true}
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
	return buildPrefix(version, d.s.modernCaps, d.s.clientInfo)
}

// finishModern pins the modern era at version.
func (d *driver) finishModern(version string, disc *negotiation.DiscoverResult, hinted bool) error {
	s := d.s
	ref := s.pub.Load().ref
	prefix, err := d.modernOn(ref, version)
	if err != nil {
		return err
	}
	n := &negState{
		era: negotiation.EraModern, version: version, discover: disc, prefix: prefix,
		hinted: hinted, kind: ref.kind, trace: d.trace, transport: d.t,
	}
	if disc != nil {
		n.serverCaps = disc.Capabilities
		n.serverInfo = disc.ServerInfo
		n.instructions = disc.Instructions
	}
	return s.ask(event{kind: evReady, neg: n, st: StateModern})
}
