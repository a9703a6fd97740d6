package engine

import (
	"context"
	"slices"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/conduitmcp/conduit/protocol"
)

// TestRestoreSubscriptions: after a legacy re-initialization (the server
// process died and was respawned) the engine re-sends the tracked
// resources/subscribe calls — each URI once, untracked ones not — and then
// signals OnRestored on the dispatcher.
func TestRestoreSubscriptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(dieOn("tools/call", legacyServer), legacyServer)
		restored := make(chan struct{}, 4)
		s := connected(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll, OnRestored: func(context.Context) { restored <- struct{}{} }})
		const kept, dropped = "file:///kept.txt", "file:///dropped.txt"
		for _, u := range []string{kept, kept, dropped} {
			s.TrackSubscription(u, true)
		}
		s.TrackSubscription(kept, false) // still one subscriber
		s.TrackSubscription(dropped, false)
		if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "echo"}, nil); err != nil {
			t.Fatalf("call across the respawn: %v", err)
		}
		synctest.Wait()
		select {
		case <-restored:
		default:
			t.Fatal("OnRestored was not called after the re-initialization")
		}
		subs := tr.peer(1).requests(protocol.MethodResourcesSubscribe)
		var uris []string
		for _, r := range subs {
			uris = append(uris, string(r.Params))
		}
		if len(uris) != 1 || !strings.Contains(uris[0], kept) {
			t.Errorf("re-subscribed %v, want %s once", uris, kept)
		}
		if m := tr.peer(1).methods(); !slices.Contains(m, protocol.MethodInitialize) {
			t.Errorf("respawned server saw %v, want a new initialize", m)
		}
		if len(restored) != 0 {
			t.Error("OnRestored called more than once")
		}
	})
}
