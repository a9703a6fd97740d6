package engine

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/google/go-cmp/cmp"
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
