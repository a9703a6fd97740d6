package engine

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// initialize starts the legacy handshake on the current connection (spec
// 2025-11-25: basic/lifecycle); initialized reads the answer on the
// loop. What follows: ready, the same step again (after Authorize, or on
// the HTTP+SSE fallback's connection), or a probe (a modern error
// answered a hinted initialize). It runs on the loop.
func (d *driver) initialize(st step) {
	s := d.s
	s.setState(StateInitializing)
	ref := s.lp.ref
	pvs, _ := ref.conn.(transport.ProtocolVersionSetter)
	if pvs != nil {
		pvs.SetProtocolVersion("")
	}
	params, err := initParams(st.version, &s.legacyCaps, s.cfg.ClientInfo)
	if err != nil {
		d.fail(err)
		return
	}
	s.deferStream(ref.conn)
	d.spawn(func() (func(), func()) {
		resp, err := d.rpc(d.ctx, protocol.MethodInitialize, params)
		var dec *decodedInit
		if err == nil && resp.Error == nil {
			// Decoded here, with the I/O, not on the loop.
			dec = new(decodedInit)
			dec.res, dec.err = negotiation.ParseInitializeResult(resp.Result)
		}
		return func() { d.initialized(st, ref, pvs, resp, dec, err) }, nil
	})
}

// decodedInit is an initialize result as decoded, or the decoding error.
type decodedInit struct {
	res protocol.InitializeResult
	err error
}

// initialized reads initialize's answer (resp and its result decoded as
// dec, or the failure err). It runs on the loop.
func (d *driver) initialized(st step, ref *connRef, pvs transport.ProtocolVersionSetter, resp *jsonrpc.Response, dec *decodedInit, err error) {
	tr := TraceStep{Step: "initialize", Sent: sentLine(protocol.MethodInitialize, st.version)}
	if err != nil {
		if resp = d.initFailed(st, &tr, err); resp == nil {
			return
		}
	}
	if resp.Error != nil {
		tr.Outcome = "rpc-error " + strconv.FormatInt(resp.Error.Code, 10)
		if negotiation.IsModernError(resp.Error.Code) && st.mayReprobe {
			tr.Verdict = "re-probe"
			d.step(tr)
			d.run(probeStep(d.s.versions(), true))
			return
		}
		tr.Verdict, tr.Err = "error", resp.Error.Error()
		d.step(tr)
		d.fail(resp.Error)
		return
	}
	if dec == nil { // a result in an HTTP error's body (initFailed)
		dec = new(decodedInit)
		dec.err = json.Unmarshal(resp.Result, &dec.res)
	}
	res, err := d.initResult(st, &tr, dec)
	if err != nil {
		d.fail(err)
		return
	}
	d.finishLegacy(ref, pvs, res)
}

// initFailed reads an initialize that failed with err: after a 401/403 it
// authorizes and starts the same step again; a 400/404/405 without a
// modern body switches to the HTTP+SSE fallback (once) and starts the
// same step on it; an HTTP error carrying a modern JSON-RPC error returns
// that response to be read as an answer. Otherwise the negotiation fails.
// It runs on the loop; nil means it took over.
func (d *driver) initFailed(st step, tr *TraceStep, err error) *jsonrpc.Response {
	s := d.s
	tr.Outcome, tr.Err = "error", err.Error()
	he, isHTTP := errors.AsType[*transport.HTTPError](err)
	if !isHTTP {
		tr.Verdict = "error"
		d.step(*tr)
		d.fail(err)
		return nil
	}
	tr.Outcome = "http " + strconv.Itoa(he.StatusCode)
	if authStatus(he.StatusCode) {
		tr.Verdict = "authorize"
		d.step(*tr)
		d.authorize(&d.initAuths, maxCallAuthAttempts, he.StatusCode, he, "initialize again", func() { d.run(st) })
		return nil
	}
	if he.Response != nil && he.Response.Error != nil && negotiation.IsModernError(he.Response.Error.Code) {
		return he.Response
	}
	if (he.StatusCode == 400 || he.StatusCode == 404 || he.StatusCode == 405) && s.cfg.Fallback != nil && d.fellBack == nil {
		tr.Verdict = "fallback"
		d.step(*tr)
		// From here on a failure names this request first (see fail).
		d.fellBack = err
		d.switchTransport(s.cfg.Fallback, func(err error) {
			if err != nil {
				d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "error", Err: err.Error()})
				d.fail(err)
				return
			}
			d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "connected", Verdict: "initialize"})
			d.run(initStep(st.version, st.exact, false))
		})
		return nil
	}
	tr.Verdict = "error"
	d.step(*tr)
	d.fail(err)
	return nil
}

// initResult checks a decoded initialize result.
func (d *driver) initResult(st step, tr *TraceStep, dec *decodedInit) (*protocol.InitializeResult, error) {
	res := &dec.res
	if err := dec.err; err != nil {
		tr.Outcome, tr.Verdict, tr.Err = "result", "error", err.Error()
		d.step(*tr)
		return nil, &negotiation.Error{Kind: negotiation.KindProtocol, Reason: "invalid initialize result", Err: err}
	}
	tr.Outcome = sentLine("result", res.ProtocolVersion)
	e := d.s.legacyVersionError(res.ProtocolVersion, st.version, d.s.pub.Load().ref.kind)
	if e == nil && st.exact && res.ProtocolVersion != st.version {
		e = &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "initialize answered with version " + strconv.Quote(res.ProtocolVersion),
			Err: &negotiation.UnsupportedProtocolVersionError{Supported: []string{res.ProtocolVersion}, Requested: st.version}}
	}
	if e != nil {
		tr.Verdict, tr.Err = "error", e.Err.Error()
		d.step(*tr)
		return nil, e
	}
	tr.Verdict = "legacy"
	d.step(*tr)
	return res, nil
}

// finishLegacy completes the handshake — notifications/initialized and a
// bounded wait for the legacy HTTP GET stream, off the loop — and then
// pins the legacy era on the loop.
func (d *driver) finishLegacy(ref *connRef, pvs transport.ProtocolVersionSetter, res *protocol.InitializeResult) {
	s := d.s
	if pvs != nil {
		pvs.SetProtocolVersion(res.ProtocolVersion)
	}
	s.openStreamFor(ref, &res.Capabilities)
	d.spawn(func() (func(), func()) {
		ctx := d.ctx
		err := s.noteThrough(ctx, protocol.NotificationInitialized, nil, true, func(ctx context.Context, method string, params json.RawMessage) error {
			return s.write(ctx, ref, &jsonrpc.Request{Method: method, Params: params})
		})
		if err != nil {
			return func() {
				d.step(TraceStep{Step: "initialized", Sent: protocol.NotificationInitialized, Outcome: "error", Err: err.Error()})
				d.fail(err)
			}, nil
		}
		if w, ok := ref.conn.(transport.StreamReadyWaiter); ok && w.WaitStreamReady(endedCtx) != nil {
			// A server may send a request on the legacy GET stream right
			// after the handshake and drop it if the stream is not open
			// yet: give the stream a bounded moment to open. Never fatal.
			// (Asked first with a context that has ended, it said whether
			// there is a stream to wait for, with no timer made if not.)
			wctx, cancel := context.WithTimeout(ctx, StreamReadyTimeout)
			err := w.WaitStreamReady(wctx)
			cancel()
			if err != nil {
				s.log.Debug("the server stream did not open in time; going on", "err", err)
			}
		}
		return func() {
			n := d.ready(negState{
				era: negotiation.EraLegacy, version: res.ProtocolVersion, init: res,
				kind: ref.kind, transport: d.t,
			})
			s.becomeReady(n, StateLegacy)
			d.finish(nil)
		}, nil
	})
}

// reconnect closes the current connection and connects the transport in
// use again (for a command: respawns the server), then runs next. It runs
// on the loop.
func (d *driver) reconnect(next func()) {
	d.switchTransport(d.t, func(err error) {
		if err != nil {
			d.fail(err)
			return
		}
		next()
	})
}

// switchTransport closes the current connection and connects t, off the
// loop; on the loop it installs the new connection and calls then. It
// runs on the loop.
func (d *driver) switchTransport(t transport.Transport, then func(error)) {
	s := d.s
	old := s.lp.ref
	d.spawn(func() (func(), func()) {
		if old != nil {
			if err := old.conn.Close(); err != nil {
				s.log.Debug("closing the previous connection", "err", err)
			}
		}
		conn, err := t.Connect(d.ctx)
		next := func() {
			st := TraceStep{Step: "reconnect", Sent: "connect", Outcome: "connected"}
			if err != nil {
				st.Outcome, st.Err = "error", err.Error()
				d.step(st)
				then(err)
				return
			}
			d.step(st)
			d.t = t
			s.install(conn)
			if kindOf(conn) == transport.KindStdio {
				s.emit(Event{Kind: EventRespawned})
			}
			then(nil)
		}
		if err != nil {
			return next, nil
		}
		return next, func() { conn.Close() }
	})
}

// endedCtx is a context that has ended: a wait given it never blocks.
var endedCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()
