package engine

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// corrupting wraps a scripted transport: a response whose result is
// {"corrupt":true} reads as the non-terminal *jsonrpc.DecodeError the
// stdio and WebSocket transports return for a malformed answer whose id
// they could recover.
type corrupting struct{ *scripted }

type corruptConn struct{ transport.Conn }

func (c corrupting) Connect(ctx context.Context) (transport.Conn, error) {
	conn, err := c.scripted.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return corruptConn{conn}, nil
}

func (c corruptConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Conn.Read(ctx)
	if r, ok := m.(*jsonrpc.Response); ok && err == nil && string(r.Result) == `{"corrupt":true}` {
		return nil, &jsonrpc.DecodeError{Reason: "result and error both present", ID: r.ID}
	}
	return m, err
}

// TestMalformedAnswerFailsItsCall: a malformed answer whose id the
// transport recovered fails the call it was meant for at once, with a
// typed protocol error, and the connection goes on.
func TestMalformedAnswerFailsItsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == protocol.MethodToolsList && len(p.requests(protocol.MethodToolsList)) == 1 {
				p.reply(r, map[string]any{"corrupt": true})
				return
			}
			modernServer(p, r)
		}))
		s, err := connect(t, corrupting{tr}, Config{Mode: ModeModern})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
		pe, ok := errors.AsType[*ProtocolError](err)
		if !ok || !errors.Is(err, ErrInvalidResponse) || pe.Method != protocol.MethodToolsList {
			t.Fatalf("Call error = %v (%T), want a *ProtocolError for tools/list matching ErrInvalidResponse", err, err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the call failed after %v of fake time, want at once", d)
		}
		if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
			t.Errorf("next call: %v, want the connection to go on", err)
		}
	})
}
