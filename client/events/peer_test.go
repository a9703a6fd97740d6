package events_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/events"
)

// scripted is a modern Streamable HTTP server that declares the events
// extension, lists one event type, "ticks", offering mode, and answers
// every other request with what answer returns for its method and
// params. It counts the requests of each method. stream, when set, is
// given the requests of events/stream (with their count so far) first,
// and reports whether it answered them.
type scripted struct {
	srv    *httptest.Server
	mu     sync.Mutex
	counts map[string]int
	stream func(w http.ResponseWriter, id json.RawMessage, n int) bool
	// list, when set, answers events/list instead of the one type.
	list func(params json.RawMessage) map[string]any
}

func newScripted(t *testing.T, mode events.Mode, answer func(method string, params json.RawMessage) map[string]any) *scripted {
	s := &scripted{counts: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, 4<<20))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.counts[m.Method]++
		n, stream, list := s.counts[m.Method], s.stream, s.list
		s.mu.Unlock()
		if m.Method == events.MethodStream && stream != nil && stream(w, m.ID, n) {
			return
		}
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var res map[string]any
		switch m.Method {
		case "server/discover":
			res = map[string]any{
				"supportedVersions": []string{"2026-07-28"},
				"capabilities":      map[string]any{"extensions": map[string]any{events.ExtensionID: map[string]any{}}},
				"_meta":             map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "scripted", "version": "1"}},
			}
		case events.MethodList:
			res = map[string]any{"events": []any{map[string]any{"name": "ticks", "delivery": []events.Mode{mode}}}}
			if list != nil {
				res = list(m.Params)
			}
		default:
			res = answer(m.Method, m.Params)
		}
		res["resultType"] = "complete"
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
	}))
	t.Cleanup(func() {
		s.srv.CloseClientConnections()
		s.srv.Close()
	})
	return s
}

func (s *scripted) count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

// dial connects a modern client to s.
func (s *scripted) dial(t *testing.T) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, s.srv.URL, client.WithProtocol(client.Modern))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWebhookFarRefreshBefore: a grant whose refreshBefore lies further
// ahead than a Duration holds (year 9999) is refreshed after the longest
// wait, not in a loop at the refresh floor (two thirds of the saturated
// time.Until wrapped around to a negative wait).
func TestWebhookFarRefreshBefore(t *testing.T) {
	s := newScripted(t, events.Webhook, func(method string, _ json.RawMessage) map[string]any {
		if method == events.MethodSubscribe {
			return map[string]any{"id": "sub_1", "refreshBefore": "9999-12-31T23:59:59Z", "cursor": nil}
		}
		return map[string]any{}
	})
	sub, err := events.New(s.dial(t), fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{
		Mode: events.Webhook, Webhook: events.WebhookOptions{URL: "https://hooks.example/1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	time.Sleep(time.Second)
	if n := s.count(events.MethodSubscribe); n != 1 {
		t.Errorf("events/subscribe sent %d times within a second of a grant until year 9999, want once", n)
	}
}

// TestPollHasMoreWithoutNews: a poll result that says hasMore but brings
// no event not delivered before (none at all, or the same one again
// under the same cursor) does not make the next poll follow at once: the
// subscription waits nextPollMs, instead of polling in a tight loop for
// as long as the server keeps saying hasMore.
func TestPollHasMoreWithoutNews(t *testing.T) {
	cases := []struct {
		name   string
		events []any
	}{
		{"empty", []any{}},
		{"replayed", []any{map[string]any{"eventId": "e1", "name": "ticks", "timestamp": "2026-01-01T00:00:00Z", "data": map[string]any{}, "cursor": "c1"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newScripted(t, events.Poll, func(method string, _ json.RawMessage) map[string]any {
				if method == events.MethodPoll {
					return map[string]any{"events": tc.events, "cursor": "c1", "hasMore": true, "nextPollMs": 60_000}
				}
				return map[string]any{}
			})
			sub, err := events.New(s.dial(t), fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			go func() {
				for range sub.Events() {
				}
			}()
			time.Sleep(time.Second)
			// The first poll drains at once when it brought an event;
			// the one after it, which brought nothing new, waits.
			want := 1 + len(tc.events)
			if n := s.count(events.MethodPoll); n > want {
				t.Errorf("events/poll sent %d times within a second, want at most %d: hasMore without news polled again at once", n, want)
			}
		})
	}
}

// TestPushUnconfirmedStreamsFail: a server that, after a first confirmed
// stream, answers every events/stream at once without
// notifications/events/active has failed each of those attempts: the
// subscription ends after 10 of them in a row with a protocol error, as
// the first attempt would have, instead of opening a stream every
// backoff for ever.
func TestPushUnconfirmedStreamsFail(t *testing.T) {
	s := newScripted(t, events.Push, func(string, json.RawMessage) map[string]any { return map[string]any{} })
	s.mu.Lock()
	s.stream = func(w http.ResponseWriter, id json.RawMessage, n int) bool {
		if n > 1 {
			return false // a result at once: the stream ends unconfirmed
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, m := range []map[string]any{
			{"jsonrpc": "2.0", "method": events.NotificationActive, "params": map[string]any{"cursor": nil, "_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": id}}},
			{"jsonrpc": "2.0", "id": id, "result": map[string]any{"resultType": "complete"}},
		} {
			b, _ := json.Marshal(m)
			w.Write([]byte("data: " + string(b) + "\n\n"))
		}
		return true
	}
	s.mu.Unlock()
	sub, err := events.New(s.dial(t), fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Push})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	select {
	case _, ok := <-sub.Events():
		if ok {
			t.Fatal("got an event, want none")
		}
	case <-time.After(waitBound):
		t.Fatalf("the subscription still runs after %v and %d events/stream requests; want it ended after 10 unconfirmed streams in a row", waitBound, s.count(events.MethodStream))
	}
	var ce *client.Error
	if err := sub.Err(); !errors.As(err, &ce) || ce.Kind != client.KindProtocol {
		t.Errorf("Err() = %v, want a KindProtocol *client.Error", err)
	}
	if n := s.count(events.MethodStream); n != 11 {
		t.Errorf("events/stream sent %d times, want 11 (one confirmed, ten that were not)", n)
	}
}

// TestPushShortStreamsBackOff: a server that confirms every events/stream
// and ends it at once is reopened with a growing backoff, not every
// 250 ms for ever: the backoff starts again from its first step only
// after a stream that lived a while past its confirmation (as the
// client's subscriptions/listen streams are paced).
func TestPushShortStreamsBackOff(t *testing.T) {
	s := newScripted(t, events.Push, func(string, json.RawMessage) map[string]any { return map[string]any{} })
	s.mu.Lock()
	s.stream = func(w http.ResponseWriter, id json.RawMessage, _ int) bool {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		for _, m := range []map[string]any{
			{"jsonrpc": "2.0", "method": events.NotificationActive, "params": map[string]any{"cursor": nil, "_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": id}}},
			{"jsonrpc": "2.0", "id": id, "result": map[string]any{"resultType": "complete"}},
		} {
			b, _ := json.Marshal(m)
			w.Write([]byte("data: " + string(b) + "\n\n"))
		}
		return true
	}
	s.mu.Unlock()
	opts := fastOpts
	opts.MaxBackoff = 30 * time.Second
	sub, err := events.New(s.dial(t), opts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Push})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	time.Sleep(3 * time.Second)
	// Doubling from 250 ms: reopened after 0.25, 0.75, 1.75 and 3.75 s.
	if n := s.count(events.MethodStream); n > 4 {
		t.Errorf("events/stream sent %d times in 3 s to a server whose streams end at once, want at most 4 (a growing backoff)", n)
	}
	if err := sub.Err(); err != nil {
		t.Errorf("Err() = %v; confirmed streams are no failures", err)
	}
}

// TestDedupKeepsNoLongIDs: what a subscription remembers of the eventIds
// it delivered, to drop duplicates, does not grow with the ids: a server
// that gives a thousand events eventIds of 60 KB each does not make the
// subscription hold 60 MB of them.
func TestDedupKeepsNoLongIDs(t *testing.T) {
	const n = 1000
	long := strings.Repeat("i", 60<<10)
	var mu sync.Mutex
	k := 0
	s := newScripted(t, events.Poll, func(method string, _ json.RawMessage) map[string]any {
		if method != events.MethodPoll {
			return map[string]any{}
		}
		mu.Lock()
		k++
		id := long + strconv.Itoa(k)
		mu.Unlock()
		ev := map[string]any{"eventId": id, "name": "ticks", "timestamp": "2026-01-01T00:00:00Z", "data": map[string]any{}, "cursor": "c"}
		return map[string]any{"events": []any{ev}, "cursor": "c", "hasMore": true}
	})
	sub, err := events.New(s.dial(t), fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		recv(t, sub)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 20<<20 {
		t.Errorf("the heap grew by %d MB over %d events with 60 KB eventIds, want the ids not kept", grown>>20, n)
	}
}

// TestWebhookUnusableRefreshBefore: a server whose grants keep naming a
// refreshBefore that cannot be read, or that has already passed, is
// refreshed with a growing backoff, not every 100 ms (the refresh
// floor) for as long as the subscription lives.
func TestWebhookUnusableRefreshBefore(t *testing.T) {
	for name, before := range map[string]string{"unreadable": "soon", "past": "2000-01-01T00:00:00Z"} {
		t.Run(name, func(t *testing.T) {
			s := newScripted(t, events.Webhook, func(method string, _ json.RawMessage) map[string]any {
				if method == events.MethodSubscribe {
					return map[string]any{"id": "sub_1", "refreshBefore": before, "cursor": nil}
				}
				return map[string]any{}
			})
			opts := fastOpts
			opts.MaxBackoff = 30 * time.Second
			sub, err := events.New(s.dial(t), opts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{
				Mode: events.Webhook, Webhook: events.WebhookOptions{URL: "https://hooks.example/1"},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			time.Sleep(2 * time.Second)
			// Doubling from 250 ms: refreshed after 0.25, 0.75 and 1.75 s.
			if n := s.count(events.MethodSubscribe); n > 4 {
				t.Errorf("events/subscribe sent %d times in 2 s to a server granting refreshBefore %q, want at most 4 (a growing backoff)", n, before)
			}
			if err := sub.Err(); err != nil {
				t.Errorf("Err() = %v; granted refreshes are no failures", err)
			}
		})
	}
}

// TestListKeepsNoLongCursors: what events/list's walk remembers of the
// cursors it followed, to catch a repeated one, does not grow with the
// cursors: a server whose twenty-four pages name cursors of 256 KB each
// does not make the walk hold 6 MB of them.
func TestListKeepsNoLongCursors(t *testing.T) {
	const pages = 24
	long := strings.Repeat("c", 256<<10)
	s := newScripted(t, events.Poll, func(string, json.RawMessage) map[string]any { return map[string]any{} })
	var before, during runtime.MemStats
	s.mu.Lock()
	s.list = func(params json.RawMessage) map[string]any {
		var p struct {
			Cursor string `json:"cursor"`
		}
		_ = json.Unmarshal(params, &p)
		k, _ := strconv.Atoi(strings.TrimPrefix(p.Cursor, long))
		switch k {
		case 0:
			runtime.GC()
			runtime.ReadMemStats(&before)
		case pages:
			runtime.GC()
			runtime.ReadMemStats(&during)
			return map[string]any{"events": []any{map[string]any{"name": "ticks", "delivery": []events.Mode{events.Poll}}}}
		}
		return map[string]any{"events": []any{}, "nextCursor": long + strconv.Itoa(k+1)}
	}
	s.mu.Unlock()
	// Generous: each page carries half a megabyte, slow under the race
	// detector on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	n := 0
	for _, err := range events.New(s.dial(t), fastOpts).List(ctx) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("List yielded %d types, want 1", n)
	}
	if grown := int64(during.HeapAlloc) - int64(before.HeapAlloc); grown > 3<<20 {
		t.Errorf("the heap grew by %d MB over %d pages with 256 KB cursors, want the cursors not kept", grown>>20, pages)
	}
}
