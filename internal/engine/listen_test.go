package engine

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

func tagged(id jsonrpc.ID, extra map[string]any) map[string]any {
	p := map[string]any{"_meta": map[string]any{protocol.MetaSubscriptionID: id}}
	for k, v := range extra {
		p[k] = v
	}
	return p
}

// listenServer acknowledges a listen, sends one tagged change notification
// and one untagged notification, then does what end says.
func listenServer(end func(p *peer, r *jsonrpc.Request)) func(p *peer, m jsonrpc.Message) {
	return reqHandler(func(p *peer, r *jsonrpc.Request) {
		if r.Method != protocol.MethodSubscriptionsListen {
			modernServer(p, r)
			return
		}
		p.notify(protocol.NotificationSubscriptionsAcknowledged, tagged(r.ID, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
		p.notify(protocol.NotificationToolsListChanged, tagged(r.ID, nil))
		p.notify(protocol.NotificationToolsListChanged, tagged(jsonrpc.StringID("other"), nil))
		p.notify(protocol.NotificationMessage, map[string]any{"level": "info", "data": "untagged"})
		if end != nil {
			end(p, r)
		}
	})
}

func drain(st *Stream) []string {
	var ms []string
	for n := range st.Notifications() {
		ms = append(ms, n.Method)
	}
	return ms
}

func TestListen(t *testing.T) {
	tests := []struct {
		name       string
		end        func(p *peer, r *jsonrpc.Request)
		close      bool
		wantErr    error
		wantCancel bool
	}{
		{name: "result-ends-gracefully", end: func(p *peer, r *jsonrpc.Request) {
			p.reply(r, tagged(r.ID, map[string]any{"resultType": "complete"}))
		}},
		{name: "server-cancelled-ends-gracefully", end: func(p *peer, r *jsonrpc.Request) {
			p.notify(protocol.NotificationCancelled, map[string]any{"requestId": r.ID})
		}},
		{name: "error-result", end: func(p *peer, r *jsonrpc.Request) {
			p.replyErr(r, jsonrpc.CodeInvalidParams, "bad filter", nil)
		}, wantErr: jsonrpc.ErrInvalidParams},
		{name: "client-close", close: true, wantCancel: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(listenServer(tt.end))
				var other []string
				s := connected(t, tr, Config{OnNotification: func(ctx context.Context, n *jsonrpc.Request) {
					other = append(other, n.Method)
				}})
				st, err := s.Listen(t.Context(), map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
				if err != nil {
					t.Fatal(err)
				}
				synctest.Wait()
				if tt.close {
					st.Close()
				}
				got := drain(st)
				<-st.Done()
				want := []string{protocol.NotificationSubscriptionsAcknowledged, protocol.NotificationToolsListChanged}
				if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
					t.Errorf("stream notifications = %v, want %v", got, want)
				}
				if !errors.Is(st.Err(), tt.wantErr) || (tt.wantErr == nil && st.Err() != nil) {
					t.Errorf("Err() = %v, want %v", st.Err(), tt.wantErr)
				}
				synctest.Wait()
				if len(other) != 1 || other[0] != protocol.NotificationMessage {
					t.Errorf("OnNotification got %v, want only the untagged message", other)
				}
				var cancels []jsonrpc.ID
				for _, m := range tr.peer(0).messages() {
					if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.NotificationCancelled {
						var cp struct {
							RequestID jsonrpc.ID `json:"requestId"`
						}
						json.Unmarshal(r.Params, &cp)
						cancels = append(cancels, cp.RequestID)
					}
				}
				if tt.wantCancel != (len(cancels) == 1 && cancels[0] == st.ID()) {
					t.Errorf("cancellations sent = %v, want cancel %v of %v", cancels, tt.wantCancel, st.ID())
				}
				listen := tr.peer(0).requests(protocol.MethodSubscriptionsListen)[0]
				if member(listen.Params, "_meta") == nil || member(listen.Params, "notifications") == nil {
					t.Errorf("listen params = %s", listen.Params)
				}
			})
		})
	}
}

func TestListenOverflow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodSubscriptionsListen {
				modernServer(p, r)
				return
			}
			// Log messages cannot be coalesced (a burst of change
			// notifications can: TestListenBurstCoalesced).
			for range StreamBuffer + 1 {
				p.notify(protocol.NotificationMessage, tagged(r.ID, map[string]any{"level": "info", "data": "x"}))
			}
		}))
		_, st := listenAll(t, tr, Config{})
		<-st.Done()
		if !errors.Is(st.Err(), ErrStreamOverflow) {
			t.Errorf("Err() = %v, want ErrStreamOverflow", st.Err())
		}
		if n := len(drain(st)); n != StreamBuffer {
			t.Errorf("buffered %d notifications, want %d", n, StreamBuffer)
		}
		synctest.Wait()
		found := false
		for _, m := range tr.peer(0).methods() {
			found = found || m == protocol.NotificationCancelled
		}
		if !found {
			t.Error("overflowed subscription was not cancelled on the server")
		}
	})
}

func TestListenLegacy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s := legacySession(t)
		if _, err := s.Listen(t.Context(), nil); !errors.Is(err, ErrNotModern) {
			t.Errorf("Listen on legacy = %v, want ErrNotModern", err)
		}
	})
}

// TestListenDropped: the connection drops; the stream ends with a
// *ConnectionLostError (the client layer re-listens).
func TestListenDropped(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(listenServer(func(p *peer, r *jsonrpc.Request) { p.kill() }), modernServer)
		s, st := listenAll(t, tr, Config{})
		drain(st)
		if _, ok := errors.AsType[*ConnectionLostError](st.Err()); !ok {
			t.Errorf("Err() = %v, want *ConnectionLostError", st.Err())
		}
		// The session healed: new calls work on the new connection.
		if _, err := s.Call(t.Context(), "tools/list", nil, nil); err != nil {
			t.Errorf("Call after heal: %v", err)
		}
	})
}
