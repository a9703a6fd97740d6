package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestPeerNoise: malformed or unexpected traffic from the server is
// dropped without disturbing the session: responses to unknown ids (string
// and integer), malformed progress and cancellation params, progress for
// unknown tokens, tagged notifications for unknown subscriptions, requests
// from a modern server, and non-JSON lines.
func TestPeerNoise(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == "tools/call" {
				p.send(&jsonrpc.Response{ID: jsonrpc.StringID("1"), Result: json.RawMessage(`{}`)})
				p.send(&jsonrpc.Response{ID: jsonrpc.Int64ID(999999), Result: json.RawMessage(`{}`)})
				p.send(&jsonrpc.Request{Method: protocol.NotificationProgress, Params: json.RawMessage(`{"progressToken":{"x":1},"progress":"a"}`)})
				p.send(&jsonrpc.Request{Method: protocol.NotificationProgress, Params: json.RawMessage(`{"progressToken":424242,"progress":1}`)})
				p.send(&jsonrpc.Request{Method: protocol.NotificationCancelled, Params: json.RawMessage(`{"requestId":null}`)})
				p.send(&jsonrpc.Request{Method: protocol.NotificationCancelled, Params: json.RawMessage(`[1]`)})
				p.send(&jsonrpc.Request{Method: protocol.NotificationToolsListChanged, Params: json.RawMessage(`{"_meta":{"io.modelcontextprotocol/subscriptionId":77}}`)})
				p.send(&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: protocol.MethodRootsList})
				p.wlock <- struct{}{}
				p.rw.Write([]byte("this is not json\n{\"jsonrpc\":\"1.0\"}\n"))
				<-p.wlock
			}
			modernServer(p, r)
		}))
		var got []string
		s := connected(t, tr, Config{Handler: detected(allHandlers), OnNotification: func(_ context.Context, n *jsonrpc.Request) {
			got = append(got, n.Method)
		}})
		for range 2 {
			if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
				t.Fatalf("Call: %v", err)
			}
		}
		synctest.Wait()
		// Progress the session cannot attribute (malformed, or an unknown
		// token) goes to OnNotification: two per call. Nothing else does.
		progress := 0
		for _, m := range got {
			if m == protocol.NotificationProgress {
				progress++
			}
		}
		if progress != 4 || len(got) != 4 {
			t.Errorf("OnNotification got %v, want 4 progress notifications", got)
		}
		for _, m := range tr.peer(0).messages() {
			if _, ok := m.(*jsonrpc.Response); ok {
				t.Errorf("the client answered a modern server's request: %+v", m)
			}
		}
	})
}

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
		s := connected(t, corrupting{tr}, Config{Mode: ModeModern})
		start := time.Now()
		_, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
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
