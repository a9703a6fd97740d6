package engine

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// initialize runs the legacy handshake on the current connection (spec
// 2025-11-25: basic/lifecycle) and returns the next step: ready, the same
// step again (after Authorize, or on the HTTP+SSE fallback's connection),
// or a probe (a modern error answered a hinted initialize).
func (d *driver) initialize(ctx context.Context, st step) (step, error) {
	s := d.s
	if err := d.setState(StateInitializing); err != nil {
		return step{}, err
	}
	ref := s.pub.Load().ref
	pvs, _ := ref.conn.(transport.ProtocolVersionSetter)
	if pvs != nil {
		pvs.SetProtocolVersion("")
	}
	params, err := json.Marshal(protocol.InitializeParams{ProtocolVersion: st.version, Capabilities: s.legacyCaps, ClientInfo: s.clientInfo})
	if err != nil {
		return step{}, err
	}
	resp, err := d.rpc(ctx, protocol.MethodInitialize, params)
	tr := TraceStep{Step: "initialize", Sent: protocol.MethodInitialize + " " + st.version}
	if err != nil {
		var next *step
		if resp, next, err = d.initFailed(ctx, st, &tr, err); next != nil || err != nil {
			return derefStep(next), err
		}
	}
	if resp.Error != nil {
		tr.Outcome = "rpc-error " + strconv.FormatInt(resp.Error.Code, 10)
		if negotiation.IsModernError(resp.Error.Code) && st.mayReprobe {
			tr.Verdict = "re-probe"
			d.step(tr)
			return probeStep(negotiation.Versions(), true), nil
		}
		tr.Verdict, tr.Err = "error", resp.Error.Error()
		d.step(tr)
		return step{}, resp.Error
	}
	res, err := d.initResult(st, &tr, resp)
	if err != nil {
		return step{}, err
	}
	return step{kind: stepReady}, d.finishLegacy(ctx, ref, pvs, res)
}

func derefStep(p *step) step {
	if p == nil {
		return step{}
	}
	return *p
}

// initFailed reads an initialize that failed with err: after a 401/403 it
// authorizes and names the same step again; a 400/404/405 without a
// modern body switches to the HTTP+SSE fallback (once) and names the same
// step on it; an HTTP error carrying a modern JSON-RPC error returns that
// response to be read as an answer. Otherwise it returns the error.
func (d *driver) initFailed(ctx context.Context, st step, tr *TraceStep, err error) (*jsonrpc.Response, *step, error) {
	s := d.s
	tr.Outcome, tr.Err = "error", err.Error()
	he, isHTTP := errors.AsType[*transport.HTTPError](err)
	if !isHTTP {
		tr.Verdict = "error"
		d.step(*tr)
		return nil, nil, err
	}
	tr.Outcome = "http " + strconv.Itoa(he.StatusCode)
	if authStatus(he.StatusCode) {
		tr.Verdict = "authorize"
		d.step(*tr)
		if err := d.authorize(ctx, &d.initAuths, maxCallAuthAttempts, he.StatusCode, he, "initialize again"); err != nil {
			return nil, nil, err
		}
		return nil, &st, nil
	}
	if he.Response != nil && he.Response.Error != nil && negotiation.IsModernError(he.Response.Error.Code) {
		return he.Response, nil, nil
	}
	if (he.StatusCode == 400 || he.StatusCode == 404 || he.StatusCode == 405) && s.cfg.Fallback != nil && d.fellBack == nil {
		tr.Verdict = "fallback"
		d.step(*tr)
		// From here on a failure names this request first (see run).
		d.fellBack = err
		if err := d.switchTransport(ctx, s.cfg.Fallback); err != nil {
			d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "error", Err: err.Error()})
			return nil, nil, err
		}
		d.step(TraceStep{Step: "fallback", Sent: "connect HTTP+SSE", Outcome: "connected", Verdict: "initialize"})
		next := initStep(st.version, st.exact, false)
		return nil, &next, nil
	}
	tr.Verdict = "error"
	d.step(*tr)
	return nil, nil, err
}

// initResult decodes and checks an initialize result.
func (d *driver) initResult(st step, tr *TraceStep, resp *jsonrpc.Response) (*protocol.InitializeResult, error) {
	var res protocol.InitializeResult
	if err := json.Unmarshal(resp.Result, &res); err != nil {
		tr.Outcome, tr.Verdict, tr.Err = "result", "error", err.Error()
		d.step(*tr)
		return nil, &negotiation.Error{Kind: negotiation.KindProtocol, Reason: "invalid initialize result", Err: err}
	}
	tr.Outcome = "result " + res.ProtocolVersion
	if !slices.Contains(negotiation.LegacyVersions(), res.ProtocolVersion) || (st.exact && res.ProtocolVersion != st.version) {
		upv := &negotiation.UnsupportedProtocolVersionError{Supported: []string{res.ProtocolVersion}, Requested: st.version}
		tr.Verdict, tr.Err = "error", upv.Error()
		d.step(*tr)
		return nil, &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: "initialize answered with version " + strconv.Quote(res.ProtocolVersion), Err: upv}
	}
	tr.Verdict = "legacy"
	d.step(*tr)
	return &res, nil
}

// finishLegacy completes the handshake (notifications/initialized, a
// bounded wait for the legacy HTTP GET stream) and pins the legacy era.
func (d *driver) finishLegacy(ctx context.Context, ref *connRef, pvs transport.ProtocolVersionSetter, res *protocol.InitializeResult) error {
	s := d.s
	if pvs != nil {
		pvs.SetProtocolVersion(res.ProtocolVersion)
	}
	err := s.noteThrough(ctx, protocol.NotificationInitialized, nil, true, func(ctx context.Context, method string, params json.RawMessage) error {
		return s.write(ctx, ref, &jsonrpc.Request{Method: method, Params: params})
	})
	if err != nil {
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
		era: negotiation.EraLegacy, version: res.ProtocolVersion, init: res,
		serverCaps: res.Capabilities, serverInfo: &res.ServerInfo, instructions: res.Instructions,
		kind: ref.kind, trace: d.trace, transport: d.t,
	}
	return s.ask(event{kind: evReady, neg: n, st: StateLegacy})
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
	if old := s.pub.Load().ref; old != nil {
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
	if err := s.ask(event{kind: evInstall, conn: conn}); err != nil {
		conn.Close()
		return err
	}
	if kindOf(conn) == transport.KindStdio {
		s.emit(Event{Kind: EventRespawned})
	}
	return nil
}
