package engine

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// ResubscribeTimeout bounds the resources/subscribe calls that restore
// the legacy resource subscriptions after a re-initialization.
const ResubscribeTimeout = 30 * time.Second

// subscribedSet is the legacy bookkeeping of resources/subscribe: the URIs
// the server was asked to watch, counted per subscriber, which the engine
// re-sends after a re-initialization (a new legacy HTTP session or a
// respawned process holds none of them).
type subscribedSet struct {
	mu sync.Mutex
	n  map[string]int // guarded by mu
}

// TrackSubscription records (on) or forgets (!on) one subscriber's
// resources/subscribe of uri, sent in the legacy era, so that the engine
// restores it after a re-initialization (see [Config.OnRestored]).
func (s *Session) TrackSubscription(uri string, on bool) {
	t := &s.subscribed
	t.mu.Lock()
	defer t.mu.Unlock()
	if on {
		if t.n == nil {
			t.n = make(map[string]int)
		}
		t.n[uri]++
		return
	}
	if t.n[uri]--; t.n[uri] <= 0 {
		delete(t.n, uri)
	}
}

func (t *subscribedSet) uris() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.n))
	for u := range t.n {
		out = append(out, u)
	}
	return out
}

// restore re-sends the tracked resources/subscribe calls after a legacy
// re-initialization, then queues the restored signal for the dispatcher,
// in order with the notifications. It runs on its own goroutine (counted
// in wg), started by the loop, and ends when the calls are done.
func (s *Session) restore() {
	defer s.wg.Done()
	uris := s.subscribed.uris()
	if len(uris) > 0 {
		s.log.Debug("session re-initialized; re-subscribing", "resources", uris)
	}
	ctx, cancel := context.WithTimeout(s.dctx.Context, ResubscribeTimeout)
	defer cancel()
	for _, u := range uris {
		if _, err := s.Call(ctx, protocol.MethodResourcesSubscribe, &protocol.SubscribeParams{URI: u}, &CallOptions{restoring: true}); err != nil {
			if errors.Is(err, ErrClosed) || s.dctx.Context.Err() != nil {
				return
			}
			s.log.Warn("re-subscribing after re-initialization failed", "uri", u, "err", err)
		}
	}
	s.post(event{kind: evRestored})
}
