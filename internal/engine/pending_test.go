package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// TestLateProgressDropped: progress for a request of ours that has already
// been answered is dropped, not handed to OnNotification as an unknown
// notification, whether the response took the reader's direct path (a
// plain timed call) or the loop's (a call with a Progress callback). The
// notification sent after it proves the loop handled it.
func TestLateProgressDropped(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		opts *CallOptions
	}{
		{name: "direct", cfg: Config{IdleTimeout: time.Minute}},
		{name: "through-loop", opts: &CallOptions{Progress: func(protocol.ProgressParams) {}}},
		{name: "legacy-direct", cfg: Config{Mode: ModeLegacy, IdleTimeout: time.Minute}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(toolCallServer(t, tt.cfg.Mode, func(p *peer, r *jsonrpc.Request, tok json.RawMessage) {
					p.reply(r, map[string]any{"resultType": "complete"})
					p.notify(protocol.NotificationProgress, map[string]any{"progressToken": json.RawMessage(tok), "progress": 1})
					p.notify(protocol.NotificationToolsListChanged, nil)
				}))
				var mu sync.Mutex
				var got []string
				cfg := tt.cfg
				cfg.OnNotification = func(ctx context.Context, n *jsonrpc.Request) {
					mu.Lock()
					got = append(got, n.Method)
					mu.Unlock()
				}
				s, err := connect(t, tr, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if _, err := s.Call(t.Context(), "tools/call", nil, tt.opts); err != nil {
					t.Fatalf("Call: %v", err)
				}
				synctest.Wait()
				mu.Lock()
				defer mu.Unlock()
				if diff := cmp.Diff([]string{protocol.NotificationToolsListChanged}, got); diff != "" {
					t.Errorf("notifications delivered (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// progressServer sends n progress notifications for every tools/call
// that carries a progress token, then the result.
func progressServer(n int, base func(p *peer, m jsonrpc.Message), modern bool) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != protocol.MethodToolsCall {
			base(p, m)
			return
		}
		var pm struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(req.Params, &pm)
		tok := pm.Meta[protocol.MetaProgressToken]
		for i := range n {
			p.notify(protocol.NotificationProgress, map[string]any{"progressToken": tok, "progress": i + 1, "total": n})
		}
		p.notify(protocol.NotificationMessage, map[string]any{"level": "info", "data": "done"})
		p.reply(req, echoResult(nil, modern))
	}
}

// TestProgressDeliveredBeforeReturn: every progress notification (and log
// message) the server sent before the response has been delivered when
// Call returns, in both eras, even with slow callbacks.
func TestProgressDeliveredBeforeReturn(t *testing.T) {
	const n = 50
	for _, era := range []negotiation.Era{negotiation.EraModern, negotiation.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base, mode := modernServer, ModeAuto
				if era == negotiation.EraLegacy {
					base, mode = legacyServer, ModeLegacy
				}
				var logs atomic.Int32
				h := handler.LogListenerFunc(func(ctx context.Context, p *protocol.LoggingMessageParams) {
					time.Sleep(time.Millisecond)
					logs.Add(1)
				})
				tr := newScripted(progressServer(n, base, era == negotiation.EraModern))
				s, err := connect(t, tr, Config{Mode: mode, Handler: handler.Detect(h)})
				if err != nil {
					t.Fatal(err)
				}
				var count atomic.Int32
				opts := &CallOptions{Progress: func(protocol.ProgressParams) {
					time.Sleep(time.Millisecond) // slow user code
					count.Add(1)
				}}
				for i := range 3 {
					count.Store(0)
					logs.Store(0)
					if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts); err != nil {
						t.Fatal(err)
					}
					if got := count.Load(); got != n {
						t.Errorf("call %d: %d progress callbacks ran before Call returned, want %d", i, got, n)
					}
					if got := logs.Load(); got != 1 {
						t.Errorf("call %d: %d log messages delivered before Call returned, want 1", i, got)
					}
				}
			})
		})
	}
}

// TestDirectCallsAcrossReconnect: many concurrent plain calls (registered
// directly, resolved by the reader) while the connection dies under them
// all complete: the ones in flight on the lost connection are replayed on
// the new one, and none registers on the dead connection after the loss
// was seen.
func TestDirectCallsAcrossReconnect(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var killed sync.Once
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != "tools/call" {
				modernServer(p, r)
				return
			}
			if !r.ID.IsValid() {
				return
			}
			killed.Do(p.kill) // the first call kills the first connection
		}), reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != "tools/call" {
				modernServer(p, r)
				return
			}
			p.reply(r, map[string]any{"resultType": "complete"})
		}))
		s, err := connect(t, tr, Config{Replay: ReplayAll})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 50)
		for range 50 {
			wg.Go(func() {
				if _, err := s.Call(t.Context(), "tools/call", nil, nil); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("Call: %v", err)
		}
		if n := tr.connects(); n != 2 {
			t.Errorf("connects = %d, want 2", n)
		}
	})
}
