package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// sendSpec says how one request is sent.
type sendSpec struct {
	params  json.RawMessage
	level   protocol.LoggingLevel // modern _meta logLevel
	headers http.Header           // extra HTTP headers of this request
	// wait bounds waiting for the loop to register the request (a
	// reconnection in progress); 0: only ctx.
	wait time.Duration
	// verbatim sends params as they are (negotiation requests, which
	// build their own _meta); otherwise buildRequest adds the negotiated
	// era's envelope.
	verbatim bool
}

// send is the first half of the session's one send path (register →
// write → await), taken by every outgoing request: user calls,
// negotiation requests, listen streams. It registers c — directly in the
// lock-guarded pending table (no round trip through the loop) when c is a
// plain call and the session is ready, or when c is negotiation traffic
// and there is a current connection (it goes there at once, in any
// state); otherwise through the loop, which holds c until it may be sent
// or fails it — then builds and writes the request. The caller then awaits the answer (s.await) or,
// for listen, the stream.
//
// err is a failure before the write (the session closed or failed, a
// request that cannot be encoded, ctx); writeErr is the connection's
// failure to write (ctx.Err() when ctx ended meanwhile). Either way c is
// no longer pending.
func (s *Session) send(ctx context.Context, c *call, sp *sendSpec) (writeErr, err error) {
	if !s.pending.tryRegister(c, s.pub.Load().neg) {
		if !s.post(event{kind: evRegister, call: c}) {
			return nil, ErrClosed
		}
		r, err := s.await(ctx, c, sp.wait, 0, false)
		if err != nil {
			return nil, err
		}
		if r.err != nil {
			c.settled = true
			return nil, r.err
		}
	}
	var req *jsonrpc.Request
	if sp.verbatim {
		c.req = jsonrpc.Request{ID: jsonrpc.Int64ID(c.id), Method: c.method, Params: sp.params}
		req = &c.req
	} else if req, err = s.buildRequestFor(ctx, c, sp); err != nil {
		s.post(event{kind: evAbandon, call: c})
		return nil, err
	}
	wctx := ctx
	if len(sp.headers) > 0 {
		wctx = transport.WithRequestHeaders(ctx, sp.headers)
	}
	c.wrote = true
	if err := s.write(wctx, c.ref, req); err != nil {
		c.wrote = !unwrittenErr(err)
		if ctx.Err() != nil {
			// On Streamable HTTP the write spans the exchange: the
			// request may have reached the server, which must be told
			// (notifications/cancelled in the legacy era, the aborted
			// POST in the modern one), unless the transport says
			// nothing of it was sent.
			s.post(event{kind: evAbandon, call: c, cancel: perRequest(c.ref.kind) && c.wrote, reason: context.Cause(ctx).Error()})
			return ctx.Err(), nil
		}
		s.post(event{kind: evAbandon, call: c})
		return err, nil
	}
	return nil, nil
}

// unwrittenErr reports a write error by which the transport says that
// nothing of the message reached the server: a POST that failed before
// its body was sent (transport.NetworkError.Unsent), or an error matching
// transport.ErrClosed without a *transport.NetworkError (a connection
// closed or known broken before the write).
func unwrittenErr(err error) bool {
	ne, isNet := errors.AsType[*transport.NetworkError](err)
	if isNet {
		return ne.Unsent
	}
	return errors.Is(err, transport.ErrClosed)
}
