package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// start runs the loop and the dispatcher, makes the first connection and
// negotiates. It runs on Connect's goroutine.
func (s *Session) start(ctx context.Context) error {
	s.wg.Add(1)
	go s.dispatcher()
	go s.loop()
	conn, err := s.t.Connect(ctx)
	if err != nil {
		return err
	}
	if err := s.runOnLoop(func() { s.install(conn) }); err != nil {
		conn.Close()
		return err
	}
	d := &driver{s: s, t: s.t}
	if err := d.initial(ctx); err != nil {
		return &NegotiationError{Mode: s.cfg.Mode, Trace: d.trace, Err: err}
	}
	return nil
}

// driver runs the negotiation steps: on Connect's goroutine at first, on a
// healer goroutine after a lost connection. It does the blocking I/O; the
// loop keeps the state, which the driver changes through runOnLoop.
type driver struct {
	s         *Session
	t         transport.Transport // the transport in use (the Fallback after a fallback)
	trace     []TraceStep
	fellBack  bool
	initAuths int // Authorize calls after initialize was answered 401/403
}

func (d *driver) step(st TraceStep) {
	d.trace = append(d.trace, st)
	d.s.log.Debug("negotiation step", "step", st.Step, "sent", st.Sent, "outcome", st.Outcome, "verdict", st.Verdict, "err", st.Err)
}

func (d *driver) setState(st State) error {
	return d.s.runOnLoop(func() { d.s.setState(st) })
}

// initial negotiates according to the configured mode.
func (d *driver) initial(ctx context.Context) error {
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
			return d.finishModern(v, cfg.DiscoverHint, true)
		case negotiation.EraLegacy:
			v := cfg.VersionHint
			if !slices.Contains(negotiation.LegacyVersions(), v) {
				v = protocol.LatestLegacyVersion
			}
			d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era cache: legacy " + v, Verdict: "legacy"})
			return d.initialize(ctx, v, false, true)
		}
		return d.probe(ctx, negotiation.Versions(), true)
	case ModeModern:
		return d.probe(ctx, negotiation.ModernVersions(), false)
	case ModeLegacy:
		return d.initialize(ctx, protocol.LatestLegacyVersion, false, false)
	case ModePinned:
		switch negotiation.EraOf(cfg.PinVersion) {
		case negotiation.EraModern:
			return d.probe(ctx, []string{cfg.PinVersion}, false)
		case negotiation.EraLegacy:
			return d.initialize(ctx, cfg.PinVersion, true, false)
		}
		return &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "pinned version " + strconv.Quote(cfg.PinVersion) + " is not a protocol version"}
	}
	return fmt.Errorf("session: unknown mode %v", cfg.Mode)
}

// probeClass maps a connection's transport class to the classifier's
// (seed 003): only the stdio child process is stdio-like; WebSocket, the
// in-memory pipe and both HTTP transports are HTTP, so a probe timeout
// there is a retried, typed error, never a legacy verdict.
func probeClass(ref *connRef) negotiation.TransportKind {
	if ref.class == transport.ClassStdio {
		return negotiation.TransportStdio
	}
	return negotiation.TransportHTTP
}

// probe sends server/discover and follows the classifier's verdicts until
// an era is reached or a typed error ends the negotiation.
func (d *driver) probe(ctx context.Context, versions []string, fallback bool) error {
	s := d.s
	if err := d.setState(StateProbing); err != nil {
		return err
	}
	version := ""
	for _, v := range versions {
		if negotiation.EraOf(v) == negotiation.EraModern {
			version = v
			break
		}
	}
	if version == "" {
		return &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: negotiation.ReasonNoCommonVersion}
	}
	corrected := false
	auths := 0
	retry := newRetrier(s.cfg.Retry)
	for {
		ref := s.cur.Load()
		o, he, err := d.probeOnce(ctx, version)
		if err != nil {
			return err
		}
		pc := negotiation.ProbeContext{
			ClientVersions:    versions,
			RequestedVersion:  version,
			FallbackAvailable: fallback,
			Transport:         probeClass(ref),
		}
		v := negotiation.ClassifyProbe(pc, o)
		st := TraceStep{Step: "probe", Sent: protocol.MethodDiscover + " " + version, Outcome: describeOutcome(o), Verdict: v.Kind.String()}
		if v.Reason != "" {
			st.Verdict += " (" + v.Reason + ")"
		}
		if v.Err != nil && v.Kind == negotiation.VerdictError {
			st.Err = v.Err.Error()
		}
		d.step(st)
		switch v.Kind {
		case negotiation.VerdictModern:
			return d.finishModern(v.Version, v.Discover, false)
		case negotiation.VerdictCorrective:
			if corrected {
				// The loop guard: the corrective re-probe runs exactly once.
				return v.Err
			}
			corrected = true
			version = v.Version
		case negotiation.VerdictLegacy:
			lv := v.Version
			if negotiation.EraOf(lv) != negotiation.EraLegacy {
				lv = protocol.LatestLegacyVersion
			}
			return d.initialize(ctx, lv, false, false)
		case negotiation.VerdictReconnect:
			if err := d.reconnect(ctx); err != nil {
				return err
			}
			return d.initialize(ctx, protocol.LatestLegacyVersion, false, false)
		case negotiation.VerdictAuthorize:
			if s.cfg.Authorize == nil || auths >= maxAuthAttempts {
				return authError(v.Status, he)
			}
			auths++
			err := s.cfg.Authorize(ctx, he)
			d.step(TraceStep{Step: "authorize", Sent: "Authorize hook", Outcome: errText(err), Verdict: "probe again"})
			if err != nil {
				return fmt.Errorf("session: authorizing: %w", errors.Join(err, authError(v.Status, he)))
			}
		case negotiation.VerdictRetry:
			var after time.Duration
			if he != nil {
				after = he.RetryAfter
			}
			wait, ok := retry.next(after)
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
			if err := s.sleep(ctx, wait); err != nil {
				return err
			}
			if ref.lost.Load() {
				// The connection itself ended (a WebSocket or pipe
				// closed by the server): retry on a new one.
				if err := d.reconnect(ctx); err != nil {
					return err
				}
			}
		case negotiation.VerdictError:
			return v.Err
		default:
			return fmt.Errorf("session: unknown verdict %v", v.Kind)
		}
	}
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
	ref := s.cur.Load()
	if pvs, ok := ref.conn.(transport.ProtocolVersionSetter); ok {
		pvs.SetProtocolVersion(version)
	}
	prefix, err := buildPrefix(version, s.modernCaps, s.clientInfo)
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
		// on a new connection (see probeRetry), never a downgrade.
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
// for the response. It is never cancelled on the wire: initialize must not
// be, and a timed-out probe is legacy evidence, not something to cancel
// before initialize.
func (d *driver) rpc(ctx context.Context, method string, params json.RawMessage) (*jsonrpc.Response, error) {
	s := d.s
	c := newCall(method)
	c.internal, c.noCancel = true, true
	if !s.post(event{kind: evRegister, call: c}) {
		return nil, ErrClosed
	}
	r, err := s.await(ctx, c, 0, 0, false)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	req := &jsonrpc.Request{ID: jsonrpc.Int64ID(c.id), Method: method, Params: params}
	if err := s.write(ctx, c.ref, req); err != nil {
		s.post(event{kind: evAbandon, call: c})
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	r, err = s.await(ctx, c, 0, 0, true)
	if err != nil {
		return nil, err
	}
	if r.err != nil {
		return nil, r.err
	}
	return r.resp, nil
}

// finishModern pins the modern era at version.
func (d *driver) finishModern(version string, disc *negotiation.DiscoverResult, hinted bool) error {
	s := d.s
	ref := s.cur.Load()
	if pvs, ok := ref.conn.(transport.ProtocolVersionSetter); ok {
		pvs.SetProtocolVersion(version)
	}
	prefix, err := buildPrefix(version, s.modernCaps, s.clientInfo)
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
	return s.runOnLoop(func() { s.becomeReady(n, StateModern) })
}

// initialize runs the legacy handshake on the current connection with
// version. exact demands the server answer with exactly version (legacy
// pin); mayReprobe allows one probe when the server answers with a modern
// error (the era hint was wrong).
func (d *driver) initialize(ctx context.Context, version string, exact, mayReprobe bool) error {
	s := d.s
	if err := d.setState(StateInitializing); err != nil {
		return err
	}
	ref := s.cur.Load()
	pvs, _ := ref.conn.(transport.ProtocolVersionSetter)
	if pvs != nil {
		pvs.SetProtocolVersion("")
	}
	params, err := json.Marshal(protocol.InitializeParams{ProtocolVersion: version, Capabilities: s.legacyCaps, ClientInfo: s.clientInfo})
	if err != nil {
		return err
	}
	resp, err := d.rpc(ctx, protocol.MethodInitialize, params)
	st := TraceStep{Step: "initialize", Sent: protocol.MethodInitialize + " " + version}
	if err != nil {
		st.Outcome, st.Err = "error", err.Error()
		he, isHTTP := errors.AsType[*transport.HTTPError](err)
		if isHTTP && authStatus(he.StatusCode) {
			st.Outcome = "http " + strconv.Itoa(he.StatusCode)
			st.Verdict = "authorize"
			d.step(st)
			if s.cfg.Authorize == nil || d.initAuths >= maxCallAuthAttempts {
				return authError(he.StatusCode, he)
			}
			d.initAuths++
			aerr := s.cfg.Authorize(ctx, he)
			d.step(TraceStep{Step: "authorize", Sent: "Authorize hook", Outcome: errText(aerr), Verdict: "initialize again"})
			if aerr != nil {
				return fmt.Errorf("session: authorizing: %w", errors.Join(aerr, authError(he.StatusCode, he)))
			}
			return d.initialize(ctx, version, exact, mayReprobe)
		}
		if isHTTP {
			st.Outcome = "http " + strconv.Itoa(he.StatusCode)
			if he.Response != nil && he.Response.Error != nil && negotiation.IsModernError(he.Response.Error.Code) {
				resp, err = he.Response, nil
			}
		}
		if err != nil {
			if isHTTP && (he.StatusCode == 400 || he.StatusCode == 404 || he.StatusCode == 405) && s.cfg.Fallback != nil && !d.fellBack {
				st.Verdict = "fallback"
				d.step(st)
				d.fellBack = true
				if err := d.switchTransport(ctx, s.cfg.Fallback); err != nil {
					d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "error", Err: err.Error()})
					return err
				}
				d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "connected", Verdict: "initialize"})
				return d.initialize(ctx, version, exact, false)
			}
			st.Verdict = "error"
			d.step(st)
			return err
		}
	}
	if resp.Error != nil {
		st.Outcome = "rpc-error " + strconv.FormatInt(resp.Error.Code, 10)
		if negotiation.IsModernError(resp.Error.Code) && mayReprobe {
			st.Verdict = "re-probe"
			d.step(st)
			return d.probe(ctx, negotiation.Versions(), true)
		}
		st.Verdict, st.Err = "error", resp.Error.Error()
		d.step(st)
		return resp.Error
	}
	var res protocol.InitializeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		st.Outcome, st.Verdict, st.Err = "result", "error", err.Error()
		d.step(st)
		return &negotiation.Error{Kind: negotiation.KindProtocol, Reason: "invalid initialize result", Err: err}
	}
	st.Outcome = "result " + res.ProtocolVersion
	if !slices.Contains(negotiation.LegacyVersions(), res.ProtocolVersion) || (exact && res.ProtocolVersion != version) {
		upv := &negotiation.UnsupportedProtocolVersionError{Supported: []string{res.ProtocolVersion}, Requested: version}
		st.Verdict, st.Err = "error", upv.Error()
		d.step(st)
		return &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "initialize answered with version " + strconv.Quote(res.ProtocolVersion), Err: upv}
	}
	st.Verdict = "legacy"
	d.step(st)
	if pvs != nil {
		pvs.SetProtocolVersion(res.ProtocolVersion)
	}
	note := &jsonrpc.Request{Method: protocol.NotificationInitialized}
	if err := s.write(ctx, ref, note); err != nil {
		d.step(TraceStep{Step: "initialized", Sent: protocol.NotificationInitialized, Outcome: "error", Err: err.Error()})
		return err
	}
	if w, ok := ref.conn.(transport.StreamReadyWaiter); ok {
		// A server may send a request on the legacy GET stream right
		// after the handshake and drop it if the stream is not open yet:
		// give the stream a bounded moment to open. Never fatal.
		wctx, cancel := context.WithTimeout(ctx, StreamReadyTimeout)
		err := w.WaitStreamReady(wctx)
		cancel()
		if err != nil {
			s.log.Debug("the server stream did not open in time; going on", "err", err)
		}
	}
	n := &negState{
		era: negotiation.EraLegacy, version: res.ProtocolVersion, init: &res,
		serverCaps: res.Capabilities, serverInfo: &res.ServerInfo, instructions: res.Instructions,
		kind: ref.kind, trace: d.trace, transport: d.t,
	}
	return s.runOnLoop(func() { s.becomeReady(n, StateLegacy) })
}

// reconnect closes the current connection and connects the transport in
// use again (for a command: respawns the server).
func (d *driver) reconnect(ctx context.Context) error {
	return d.switchTransport(ctx, d.t)
}

// switchTransport closes the current connection and installs a new one
// made by t.
func (d *driver) switchTransport(ctx context.Context, t transport.Transport) error {
	s := d.s
	if old := s.cur.Load(); old != nil {
		if err := old.conn.Close(); err != nil {
			s.log.Debug("closing the previous connection", "err", err)
		}
	}
	conn, err := t.Connect(ctx)
	st := TraceStep{Step: "reconnect", Sent: "connect", Outcome: "connected"}
	if err != nil {
		st.Outcome, st.Err = "error", err.Error()
		d.step(st)
		return err
	}
	d.step(st)
	d.t = t
	if err := s.runOnLoop(func() { s.install(conn) }); err != nil {
		conn.Close()
		return err
	}
	return nil
}

// startHeal begins reconnecting after ref was lost (or, with reprobe,
// re-probing after an era hint proved wrong). It runs on the loop; new
// user calls wait until the healer is done.
func (s *Session) startHeal(ref *connRef, cause error, reprobe bool) {
	lp := &s.lp
	if lp.healing || !lp.st.ready() {
		return
	}
	if s.pending.healed() > maxConsecutiveHeals {
		s.failSession(&ConnectionLostError{Err: cause})
		return
	}
	lp.healing = true
	s.setState(StateReconnecting)
	prev := s.neg.Load()
	s.wg.Add(1)
	go s.heal(prev, cause, reprobe)
}

// heal reconnects and re-negotiates in the pinned era (or re-probes).
func (s *Session) heal(prev *negState, cause error, reprobe bool) {
	defer s.wg.Done()
	ctx, cancel := context.WithTimeout(s.lifeCtx, HealTimeout)
	defer cancel()
	d := &driver{s: s, t: prev.transport, trace: slices.Clone(prev.trace)}
	var err error
	if reprobe {
		d.step(TraceStep{Step: "hint", Sent: "none", Outcome: "era hint contradicted: " + errText(cause), Verdict: "re-probe"})
		err = d.probe(ctx, negotiation.Versions(), true)
	} else {
		d.step(TraceStep{Step: "reconnect", Sent: "none", Outcome: "connection lost: " + errText(cause), Verdict: "reconnect"})
		err = d.reconnect(ctx)
		if err == nil {
			if prev.era == negotiation.EraModern {
				err = d.probe(ctx, []string{prev.version}, false)
			} else {
				err = d.initialize(ctx, prev.version, true, false)
			}
		}
	}
	if err != nil {
		s.log.Warn("session could not be restored", "err", err)
		lost := &ConnectionLostError{Err: &NegotiationError{Mode: s.cfg.Mode, Trace: d.trace, Err: err}}
		s.runOnLoop(func() { s.failSession(lost) })
	}
}

// sleep waits d, or until ctx ends or the session closes.
func (s *Session) sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.closing:
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
	if time.Since(r.start)+d > r.maxElapsed {
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
	t := time.NewTimer(p.b.NextBackOff())
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
