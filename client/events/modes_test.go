package events_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/events"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// pollTimes returns the arrival times of the server's events/poll
// requests.
func pollTimes(f *fixture) []time.Time {
	var out []time.Time
	for _, r := range f.srv.Received() {
		if r.Method == events.MethodPoll {
			out = append(out, r.At)
		}
	}
	return out
}

// TestPollDrainsOnHasMore: with hasMore the next poll follows at once,
// whatever nextPollMs says (here a minute: the events could not arrive
// within the wait bound otherwise).
func TestPollDrainsOnHasMore(t *testing.T) {
	f := connect(t, tPipe, eventsServer(testserver.EventsOptions{MaxEvents: 2, NextPollMs: 60_000}), client.WithProtocol(client.Modern))
	ec := events.New(f.c, fastOpts)
	var ids []string
	for range 5 {
		ids = append(ids, f.emit(t, "ticks"))
	}
	sub, err := ec.Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll, Cursor: ptr("c-0")})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	for _, id := range ids {
		if ev := recv(t, sub); ev.ID != id {
			t.Errorf("event %s, want %s", ev.ID, id)
		}
	}
	// The cursor advances once the events before it were handed over:
	// just after the last receive it may still be the batch's start.
	if !eventually(func() bool { c, _ := sub.Cursor(); return c == "c-5" }) {
		c, _ := sub.Cursor()
		t.Errorf("Cursor = %q, want c-5", c)
	}
}

func ptr[T any](v T) *T { return &v }

// TestPollPacing: without hasMore the next poll waits nextPollMs, and
// never less than the floor, 1 s when Options.PollFloor is zero or
// negative (lower bounds only: a slow machine cannot make them fail).
func TestPollPacing(t *testing.T) {
	cases := []struct {
		name  string
		next  int64
		floor time.Duration
		want  time.Duration
	}{
		{"nextPollMs", 300, 10 * time.Millisecond, 300 * time.Millisecond},
		{"floor", 1, 250 * time.Millisecond, 250 * time.Millisecond},
		{"default-floor", 1, 0, time.Second},
		{"negative-floor", 1, -time.Millisecond, time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := connect(t, tPipe, eventsServer(testserver.EventsOptions{NextPollMs: tc.next}), client.WithProtocol(client.Modern))
			opts := fastOpts
			opts.PollFloor = tc.floor
			sub, err := events.New(f.c, opts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if !eventually(func() bool { return len(pollTimes(f)) >= 4 }) {
				t.Fatal("fewer than 4 polls")
			}
			ts := pollTimes(f)
			for i := 1; i < 4; i++ {
				if gap := ts[i].Sub(ts[i-1]); gap < tc.want {
					t.Errorf("poll %d came %v after the previous one, want at least %v", i+1, gap, tc.want)
				}
			}
		})
	}
}

// TestPollTruncatedKeepsFreshCursor: a cursor older than the server's
// retention is answered truncated; the subscription reports a gap, then
// the retained events, and resumes from the fresh cursor.
func TestPollTruncatedKeepsFreshCursor(t *testing.T) {
	f := connect(t, tPipe, eventsServer(testserver.EventsOptions{Retention: 2, NextPollMs: 20}), client.WithProtocol(client.Modern))
	var ids []string
	for range 5 {
		ids = append(ids, f.emit(t, "ticks"))
	}
	sub, err := events.New(f.c, fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll, Cursor: ptr("c-1")})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if ev := recv(t, sub); !ev.Gap {
		t.Fatalf("first event = %+v, want a gap", ev)
	}
	for _, id := range ids[3:] {
		if ev := recv(t, sub); ev.ID != id {
			t.Errorf("event %s, want %s", ev.ID, id)
		}
	}
	if !eventually(func() bool { return len(f.requests(events.MethodPoll)) >= 2 }) {
		t.Fatal("no second poll")
	}
	if got := string(f.requests(events.MethodPoll)[1]["cursor"]); got != `"c-5"` {
		t.Errorf("the poll after the truncated one sent cursor %s, want \"c-5\"", got)
	}
}

// TestPollRelistsOnListChanged: notifications/events/list_changed on a
// poll's response makes the subscription call events/list again
// (events-client-poll, sep-9999-client-relist-on-list-changed).
func TestPollRelistsOnListChanged(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP} {
		t.Run(tr, func(t *testing.T) {
			so := testserver.Options{SSEResponses: true, Events: &testserver.EventsOptions{ListChanged: true, ListChangedOnPoll: 2, NextPollMs: 20}}
			f := connect(t, tr, so, client.WithProtocol(client.Modern))
			ec := events.New(f.c, fastOpts)
			if !ec.ListChanged() {
				t.Error("ListChanged() = false")
			}
			sub, err := ec.Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Poll})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if !eventually(func() bool { return len(f.requests(events.MethodList)) >= 2 }) {
				t.Errorf("events/list sent %d times, want a second after list_changed", len(f.requests(events.MethodList)))
			}
		})
	}
}

// TestPushSilentStreamReconnects: a stream that stays silent past the
// heartbeat timeout is reopened with the subscription's cursor, and the
// events raised meanwhile are replayed (events-client-push,
// sep-9999-client-stream-reconnect-with-cursor).
func TestPushSilentStreamReconnects(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP, tWS} {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, eventsServer(testserver.EventsOptions{SilentStreams: 1, HeartbeatMs: 50}), client.WithProtocol(client.Modern))
			opts := fastOpts
			opts.HeartbeatTimeout = 300 * time.Millisecond
			sub, err := events.New(f.c, opts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Push})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			id := f.emit(t, "ticks") // the silent stream does not send it
			if ev := recv(t, sub); ev.ID != id {
				t.Errorf("event %s, want %s", ev.ID, id)
			}
			reqs := f.requests(events.MethodStream)
			if len(reqs) < 2 {
				t.Fatalf("events/stream sent %d times, want a reconnect", len(reqs))
			}
			if got := string(reqs[1]["cursor"]); got != `"c-0"` {
				t.Errorf("reconnect cursor = %s, want the confirmed \"c-0\"", got)
			}
		})
	}
}

// TestPushResumesAfterConnectionLoss: on Streamable HTTP a dropped
// connection ends the stream; the subscription reopens it with its
// cursor and the events raised meanwhile arrive once.
func TestPushResumesAfterConnectionLoss(t *testing.T) {
	f := connect(t, tHTTP, eventsServer(testserver.EventsOptions{HeartbeatMs: 50}), client.WithProtocol(client.Modern))
	sub, err := events.New(f.c, fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Push})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	first := f.emit(t, "ticks")
	if ev := recv(t, sub); ev.ID != first {
		t.Fatalf("event %s, want %s", ev.ID, first)
	}
	f.ts.CloseClientConnections()
	second := f.srv.EmitEvent("ticks", map[string]any{"n": 1}) // in process: the connections are gone
	if ev := recv(t, sub); ev.ID != second {
		t.Errorf("event after the loss = %s, want %s once", ev.ID, second)
	}
	reqs := f.requests(events.MethodStream)
	if len(reqs) < 2 || string(reqs[len(reqs)-1]["cursor"]) < `"c-1"` {
		t.Errorf("events/stream requests %d, last cursor %s; want a reconnect from c-1 or later", len(reqs), reqs[len(reqs)-1]["cursor"])
	}
}

// TestPushNullCursorNotReplayed: a type without replay sends null
// cursors, and a reconnect sends null too (sep-9999-client-null-cursor-not-replayed).
func TestPushNullCursorNotReplayed(t *testing.T) {
	f := connect(t, tPipe, eventsServer(testserver.EventsOptions{SilentStreams: 1, HeartbeatMs: 50}), client.WithProtocol(client.Modern))
	opts := fastOpts
	opts.HeartbeatTimeout = 200 * time.Millisecond
	sub, err := events.New(f.c, opts).Subscribe(testCtx(t), "cursorless", events.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if !eventually(func() bool { return len(f.requests(events.MethodStream)) >= 2 }) {
		t.Fatal("no reconnect")
	}
	for i, p := range f.requests(events.MethodStream) {
		if c := string(p["cursor"]); c != "null" {
			t.Errorf("events/stream %d sent cursor %s, want null", i+1, c)
		}
	}
	if _, ok := sub.Cursor(); ok {
		t.Error("Cursor() reports a cursor for a type without replay")
	}
}

// TestWebhook: the subscription is registered with a generated secret,
// verified through the Receiver, refreshed before each grant ends, gets
// the signed deliveries, and is unsubscribed on Close.
func TestWebhook(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP, tStdio} {
		t.Run(tr, func(t *testing.T) {
			var recvr events.Receiver
			hooks := httptest.NewServer(&recvr)
			defer hooks.Close()
			f := connect(t, tr, eventsServer(testserver.EventsOptions{GrantMs: 600}), client.WithProtocol(client.Modern))
			sub, err := events.New(f.c, fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{
				Mode: events.Webhook, Arguments: map[string]any{"filter": "a"},
				Webhook: events.WebhookOptions{URL: hooks.URL + "/hooks/1", Receiver: &recvr, TTL: time.Minute},
			})
			if err != nil {
				t.Fatal(err)
			}
			if sub.ID() == "" {
				t.Error("ID() is empty after the grant")
			}
			id := f.emit(t, "ticks")
			if ev := recv(t, sub); ev.ID != id || string(ev.Data) != `{"n":1}` {
				t.Errorf("event = %+v, want %s", ev, id)
			}
			if f.srv != nil {
				if !eventually(func() bool { return len(f.requests(events.MethodSubscribe)) >= 3 }) {
					t.Errorf("events/subscribe sent %d times in the wait bound, want refreshes of a 600 ms grant", len(f.requests(events.MethodSubscribe)))
				}
				subs := f.requests(events.MethodSubscribe)
				for _, p := range subs[1:] {
					if string(p["name"]) != string(subs[0]["name"]) || string(p["arguments"]) != string(subs[0]["arguments"]) || string(p["delivery"]) != string(subs[0]["delivery"]) {
						t.Errorf("a refresh changed the subscription key: %s vs %s", p["delivery"], subs[0]["delivery"])
					}
					if string(p["ttlMs"]) != "60000" {
						t.Errorf("ttlMs = %s, want 60000", p["ttlMs"])
					}
				}
			}
			sub.Close()
			if f.srv != nil && f.srv.WebhookSubscriptions() != 0 {
				t.Errorf("%d webhook subscriptions left after Close, want 0 (events/unsubscribe)", f.srv.WebhookSubscriptions())
			}
		})
	}
}

// TestReceiverRefuses: the Receiver answers what it cannot accept with
// the status the extension asks for and its doc comment lists.
func TestReceiverRefuses(t *testing.T) {
	var r events.Receiver
	ts := httptest.NewServer(&r)
	defer ts.Close()
	post := func(h map[string]string, body string) int {
		req, _ := http.NewRequest(http.MethodPost, ts.URL, jsonBody(body))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	now := func(d time.Duration) string { return itoa(time.Now().Add(d).Unix()) }
	cases := []struct {
		name string
		h    map[string]string
		want int
	}{
		{"no headers", nil, http.StatusBadRequest},
		{"stale", map[string]string{"webhook-id": "e1", "webhook-timestamp": now(-time.Hour), "webhook-signature": "v1,AAAA"}, http.StatusBadRequest},
		{"unknown subscription", map[string]string{"webhook-id": "e1", "webhook-timestamp": now(0), "webhook-signature": "v1,AAAA", "X-MCP-Subscription-Id": "sub_x"}, http.StatusServiceUnavailable},
		// The default Tolerance is 5 minutes either way.
		{"4 minutes old", map[string]string{"webhook-id": "e1", "webhook-timestamp": now(-4 * time.Minute), "webhook-signature": "v1,AAAA", "X-MCP-Subscription-Id": "sub_x"}, http.StatusServiceUnavailable},
		{"6 minutes old", map[string]string{"webhook-id": "e1", "webhook-timestamp": now(-6 * time.Minute), "webhook-signature": "v1,AAAA", "X-MCP-Subscription-Id": "sub_x"}, http.StatusBadRequest},
		{"6 minutes ahead", map[string]string{"webhook-id": "e1", "webhook-timestamp": now(6 * time.Minute), "webhook-signature": "v1,AAAA", "X-MCP-Subscription-Id": "sub_x"}, http.StatusBadRequest},
	}
	for _, tc := range cases {
		if got := post(tc.h, `{"eventId":"e1"}`); got != tc.want {
			t.Errorf("%s: status %d, want %d", tc.name, got, tc.want)
		}
	}
	if got := post(nil, strings.Repeat(" ", 1<<20+1)); got != http.StatusRequestEntityTooLarge {
		t.Errorf("a body over 1 MiB: status %d, want 413", got)
	}
	resp, err := http.Get(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: status %d, want 405", resp.StatusCode)
	}
	_ = json.Valid
}

func jsonBody(s string) *strings.Reader { return strings.NewReader(s) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestReceiverBehindAndDuplicates: a delivery the subscription's consumer
// has no room for is answered 503 (the server retries it) and not lost;
// a delivery of an event already handed over is answered 204 and not
// handed over again.
func TestReceiverBehindAndDuplicates(t *testing.T) {
	var recvr events.Receiver
	hooks := httptest.NewServer(&recvr)
	defer hooks.Close()
	f := connect(t, tPipe, eventsServer(testserver.EventsOptions{}), client.WithProtocol(client.Modern))
	key := make([]byte, 32)
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	opts := fastOpts
	opts.Buffer = 1
	sub, err := events.New(f.c, opts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{
		Mode:    events.Webhook,
		Webhook: events.WebhookOptions{URL: hooks.URL, Receiver: &recvr, Secret: secret, TTL: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	deliver := func(eventID string) int {
		t.Helper()
		body := `{"eventId":"` + eventID + `","name":"ticks","timestamp":"2026-01-01T00:00:00Z","data":{"n":1}}`
		id, ts := "msg_"+eventID+"_"+itoa(time.Now().UnixNano()), itoa(time.Now().Unix())
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "." + body))
		req, _ := http.NewRequest(http.MethodPost, hooks.URL, jsonBody(body))
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", ts)
		req.Header.Set("webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(mac.Sum(nil)))
		req.Header.Set("X-MCP-Subscription-Id", sub.ID())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, step := range []struct {
		event string
		want  int
	}{
		{"e1", http.StatusNoContent},
		{"e1", http.StatusNoContent},          // a duplicate: accepted, not handed over
		{"e2", http.StatusServiceUnavailable}, // the consumer holds e1: behind
	} {
		if got := deliver(step.event); got != step.want {
			t.Errorf("delivery of %s: status %d, want %d", step.event, got, step.want)
		}
	}
	good := key
	key = make([]byte, 32)
	key[0] = 1
	if got := deliver("e3"); got != http.StatusUnauthorized {
		t.Errorf("a delivery signed with another secret: status %d, want 401", got)
	}
	key = good
	if ev := recv(t, sub); ev.ID != "e1" {
		t.Errorf("first event %q, want e1", ev.ID)
	}
	if got := deliver("e2"); got != http.StatusNoContent {
		t.Errorf("e2 delivered again once the consumer caught up: status %d, want 204", got)
	}
	if ev := recv(t, sub); ev.ID != "e2" {
		t.Errorf("second event %q, want e2 (e1 handed over twice?)", ev.ID)
	}
}
