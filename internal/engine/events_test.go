package engine

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestEventsOffTheLoop: the event hook runs on the dispatcher, never on
// the loop: a hook that blocks does not stop calls, and the events arrive
// in order (era pinned at connect, then replayed for a lost idempotent
// request, then re-initialized and pinned again after the respawn).
func TestEventsOffTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var kinds []EventKind
		tr := newScripted(dieOn("tools/call", legacyServer), legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: func(ev Event) {
			mu.Lock()
			kinds = append(kinds, ev.Kind)
			first := len(kinds) == 1
			mu.Unlock()
			if first {
				<-release // blocks the dispatcher, not the loop
			}
		}})
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, &CallOptions{Idempotent: true})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Call while the hook blocks = %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("a blocked event hook stopped calls: it runs on the loop")
		}
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		// The caller's replay and the healer's re-negotiation run
		// concurrently; each side's events keep their order.
		if len(kinds) != 4 || kinds[0] != EventEraPinned {
			t.Fatalf("events %v, want era-pinned first, then replayed, era-pinned, reinitialized", kinds)
		}
		rest := slices.DeleteFunc(slices.Clone(kinds[1:]), func(k EventKind) bool { return k == EventReplayed })
		if len(rest) != 2 || rest[0] != EventEraPinned || rest[1] != EventReinitialized {
			t.Errorf("events %v, want one replayed and era-pinned before reinitialized", kinds)
		}
	})
}
