package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/events"
)

// The events-client-* scenarios (src/scenarios/client/events/*.ts of
// @modelcontextprotocol/conformance): the harness serves two event types
// whose descriptors name one delivery mode each; the client connects,
// lists them when the extension is declared, subscribes to each in its
// mode and keeps the subscriptions for durationMs.
const (
	replayType     = "conformance.ticks"
	cursorlessType = "conformance.cursorless"
)

func descriptor(name, mode string) map[string]any {
	return map[string]any{"name": name, "description": "scenario type", "delivery": []string{mode},
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
}

// eventsMock answers discover (declaring the extension unless settings is
// nil), events/list and generic requests; handleEvents answers the rest.
func eventsMock(t *testing.T, settings map[string]any, mode string, handleEvents func(w http.ResponseWriter, r *http.Request, m recorded) bool) *mock {
	return newMock(t, func(w http.ResponseWriter, r *http.Request, m recorded) {
		switch m.Method {
		case "server/discover":
			caps := map[string]any{"tools": map[string]any{}}
			if settings != nil {
				caps["extensions"] = map[string]any{events.ExtensionID: settings}
			}
			discover(w, m.ID, caps)
		case events.MethodList:
			reply(w, m.ID, complete(map[string]any{"events": []any{descriptor(replayType, mode), descriptor(cursorlessType, mode)}}))
		default:
			if !handleEvents(w, r, m) {
				reply(w, m.ID, complete(map[string]any{}))
			}
		}
	})
}

// driveEvents is the client under test, as the scenarios' contract asks.
func driveEvents(t *testing.T, url string, d time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), d+20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, url, client.WithProtocol(client.Modern))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	ec := events.New(c, events.Options{})
	var subs []*events.Subscription
	var wg sync.WaitGroup
	for desc, err := range ec.List(ctx) {
		if err != nil {
			if !ec.Supported() && errors.Is(err, client.ErrNotSupported) {
				runFor(ctx, d) // no extension: nothing to subscribe to
				return
			}
			t.Fatalf("List: %v", err)
		}
		sub, err := ec.Subscribe(ctx, desc.Name, events.SubscribeOptions{Webhook: events.WebhookOptions{URL: "https://hooks.example/conduit/" + desc.Name}})
		if err != nil {
			t.Fatalf("Subscribe %s: %v", desc.Name, err)
		}
		subs = append(subs, sub)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range sub.Events() {
			}
		}()
	}
	runFor(ctx, d)
	for _, s := range subs {
		s.Close()
		if err := s.Err(); err != nil {
			t.Errorf("subscription %s ended: %v", s.Name(), err)
		}
	}
	wg.Wait()
}

// TestEventsClientNoExtension mirrors events-client-no-extension
// (src/scenarios/client/events/no-extension.ts): against a server that
// does not declare the extension the client sends no events/* request.
func TestEventsClientNoExtension(t *testing.T) {
	mk := eventsMock(t, nil, "poll", func(w http.ResponseWriter, r *http.Request, m recorded) bool {
		if m.Method != events.MethodPoll {
			return false
		}
		reply(w, m.ID, complete(map[string]any{"events": []any{}, "cursor": nil, "hasMore": false, "nextPollMs": 1000}))
		return true
	})
	driveEvents(t, mk.srv.URL, 2*time.Second)
	check(t, "sep-9999-client-no-events-without-extension", len(mk.requests("")) > 0, "the client never contacted the server")
	for _, r := range mk.requests("") {
		check(t, "sep-9999-client-no-events-without-extension", !strings.HasPrefix(r.Method, "events/"), "sent %s to a server without the extension", r.Method)
	}
}

// TestEventsClientPoll mirrors events-client-poll
// (src/scenarios/client/events/poll.ts): drain on hasMore, nextPollMs,
// the 1 s floor, the fresh cursor after truncated, re-listing after
// list_changed, no replay of a null cursor, an absent cursor tolerated.
func TestEventsClientPoll(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scenario's 10 s")
	}
	var mu sync.Mutex
	var listChangedAt time.Time
	var mk *mock
	mk = eventsMock(t, map[string]any{"listChanged": true}, "poll", func(w http.ResponseWriter, r *http.Request, m recorded) bool {
		if m.Method != events.MethodPoll {
			return false
		}
		var name string
		json.Unmarshal(m.Params["name"], &name)
		step := len(pollsOf(mk, name)) - 1
		occ := func(id string, cursor any) map[string]any {
			return map[string]any{"eventId": id, "name": name, "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "data": map[string]any{"eventId": id}, "cursor": cursor}
		}
		if name == cursorlessType {
			res := map[string]any{"events": []any{}, "hasMore": false, "nextPollMs": 1000}
			if step == 0 {
				res["events"], res["cursor"] = []any{occ("cursorless-1", nil)}, nil
			}
			reply(w, m.ID, complete(res))
			return true
		}
		switch step {
		case 0:
			reply(w, m.ID, complete(map[string]any{"events": []any{occ("tick-1", "tick-1")}, "cursor": "tick-1", "hasMore": true, "nextPollMs": 3000}))
		case 1:
			reply(w, m.ID, complete(map[string]any{"events": []any{occ("tick-2", "tick-2")}, "cursor": "tick-2", "hasMore": false, "nextPollMs": 2000}))
		case 2:
			reply(w, m.ID, complete(map[string]any{"events": []any{}, "cursor": "tick-3", "hasMore": false, "nextPollMs": 0}))
		case 3:
			reply(w, m.ID, complete(map[string]any{"events": []any{}, "cursor": "tick-fresh", "truncated": true, "hasMore": false, "nextPollMs": 0}))
		case 4:
			send := sse(w)
			send(map[string]any{"jsonrpc": "2.0", "method": events.NotificationListChanged})
			mu.Lock()
			listChangedAt = time.Now()
			mu.Unlock()
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": complete(map[string]any{"events": []any{}, "cursor": "tick-5", "hasMore": false, "nextPollMs": 1000})})
		default:
			reply(w, m.ID, complete(map[string]any{"events": []any{}, "cursor": "tick-6", "hasMore": false, "nextPollMs": 1000}))
		}
		return true
	})
	driveEvents(t, mk.srv.URL, 10*time.Second)

	ticks, cursorless := pollsOf(mk, replayType), pollsOf(mk, cursorlessType)
	if len(ticks) < 5 {
		t.Fatalf("%d polls of %s, the checks need 5", len(ticks), replayType)
	}
	gap := func(i int) time.Duration { return ticks[i+1].At.Sub(ticks[i].At) }
	check(t, "sep-9999-client-poll-drain-on-has-more", gap(0) < time.Second, "after hasMore the next poll came %v later", gap(0))
	check(t, "sep-9999-client-poll-respects-next-poll-ms", gap(1) >= 1800*time.Millisecond, "nextPollMs 2000, next poll %v later", gap(1))
	check(t, "sep-9999-client-poll-floor", gap(2) >= 900*time.Millisecond, "nextPollMs 0, next poll %v later", gap(2))
	check(t, "sep-9999-client-truncated-persists-fresh-cursor", cursorOf(ticks[4].Params) == `"tick-fresh"`, "after truncated the next poll sent cursor %s", cursorOf(ticks[4].Params))
	mu.Lock()
	sent := listChangedAt
	mu.Unlock()
	relisted := false
	for _, r := range mk.requests(events.MethodList) {
		relisted = relisted || (!sent.IsZero() && !r.At.Before(sent))
	}
	check(t, "sep-9999-client-relist-on-list-changed", relisted, "no events/list after notifications/events/list_changed")
	check(t, "sep-9999-client-cursor-absent-tolerated", len(cursorless) >= 3, "the client polled %s %d times", cursorlessType, len(cursorless))
	for _, r := range cursorless[1:] {
		check(t, "sep-9999-client-null-cursor-not-replayed", cursorOf(r.Params) == "null", "a later poll sent cursor %s", cursorOf(r.Params))
	}
}

func pollsOf(mk *mock, name string) []recorded {
	var out []recorded
	for _, r := range mk.requests(events.MethodPoll) {
		if string(r.Params["name"]) == `"`+name+`"` {
			out = append(out, r)
		}
	}
	return out
}

// TestEventsClientPush mirrors events-client-push
// (src/scenarios/client/events/push.ts): each type's first stream
// confirms, delivers one event, heartbeats four times 500 ms apart and
// goes silent; the client must reconnect with the last heartbeat's
// cursor (null for the cursorless type) within the 9 s run.
func TestEventsClientPush(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scenario's 9 s")
	}
	var mu sync.Mutex
	lastCursor := map[string]any{}
	var mk *mock
	mk = eventsMock(t, map[string]any{}, "push", func(w http.ResponseWriter, r *http.Request, m recorded) bool {
		if m.Method != events.MethodStream {
			return false
		}
		var name string
		json.Unmarshal(m.Params["name"], &name)
		first := len(streamsOf(mk, name)) == 1
		meta := map[string]any{"io.modelcontextprotocol/subscriptionId": m.ID}
		n := 0
		position := func() any {
			if name == replayType {
				return "p-" + string(rune('0'+n))
			}
			return nil
		}
		send := sse(w)
		note := func(method string, params map[string]any) {
			params["_meta"] = meta
			send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
		}
		note(events.NotificationActive, map[string]any{"cursor": position(), "truncated": false})
		note(events.NotificationEvent, map[string]any{"eventId": name + "-1", "name": name, "timestamp": time.Now().UTC().Format(time.RFC3339), "data": map[string]any{}, "cursor": position()})
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tick.C:
				if first && n >= 4 {
					continue // silent, not closed
				}
				n++
				note(events.NotificationHeartbeat, map[string]any{"cursor": position()})
				if first {
					mu.Lock()
					lastCursor[name] = position()
					mu.Unlock()
				}
			case <-r.Context().Done():
				return true
			}
		}
	})
	driveEvents(t, mk.srv.URL, 9*time.Second)

	ticks := streamsOf(mk, replayType)
	check(t, "sep-9999-client-stream-reconnect-with-cursor", len(ticks) >= 2, "the client did not reconnect its silent %s stream within the run", replayType)
	if len(ticks) >= 2 {
		mu.Lock()
		want, _ := json.Marshal(lastCursor[replayType])
		mu.Unlock()
		check(t, "sep-9999-client-stream-reconnect-with-cursor", cursorOf(ticks[1].Params) == string(want), "reconnected with cursor %s, the last heartbeat carried %s", cursorOf(ticks[1].Params), want)
	}
	later := streamsOf(mk, cursorlessType)
	check(t, "sep-9999-client-null-cursor-not-replayed", len(later) >= 2, "the client never reconnected its %s stream", cursorlessType)
	for _, r := range later[1:] {
		check(t, "sep-9999-client-null-cursor-not-replayed", cursorOf(r.Params) == "null", "reconnected with cursor %s", cursorOf(r.Params))
	}
}

func streamsOf(mk *mock, name string) []recorded {
	var out []recorded
	for _, r := range mk.requests(events.MethodStream) {
		if string(r.Params["name"]) == `"`+name+`"` {
			out = append(out, r)
		}
	}
	return out
}

// TestEventsClientWebhook mirrors events-client-webhook
// (src/scenarios/client/events/webhook.ts): every grant expires 2.5 s out;
// the client must refresh before refreshBefore with the same subscription
// key, and never replay a null cursor.
func TestEventsClientWebhook(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the scenario's 8 s")
	}
	var mu sync.Mutex
	grants := map[string][]time.Time{}
	var mk *mock
	mk = eventsMock(t, map[string]any{}, "webhook", func(w http.ResponseWriter, r *http.Request, m recorded) bool {
		if m.Method != events.MethodSubscribe {
			return false
		}
		var name string
		json.Unmarshal(m.Params["name"], &name)
		n := len(subscribesOf(mk, name))
		refreshBefore := time.Now().Add(2500 * time.Millisecond)
		mu.Lock()
		grants[name] = append(grants[name], refreshBefore)
		mu.Unlock()
		var cursor any
		if name == replayType {
			cursor = "w-" + string(rune('0'+n%10))
		}
		reply(w, m.ID, complete(map[string]any{"id": "sub-" + name, "cursor": cursor, "refreshBefore": refreshBefore.UTC().Format(time.RFC3339Nano)}))
		return true
	})
	driveEvents(t, mk.srv.URL, 8*time.Second)

	subs := subscribesOf(mk, replayType)
	check(t, "sep-9999-client-refresh-before-expiry", len(subs) >= 2, "the client subscribed %d times to %s, every grant 2.5 s long", len(subs), replayType)
	mu.Lock()
	g := grants[replayType]
	mu.Unlock()
	for i, r := range subs[1:] {
		check(t, "sep-9999-client-refresh-before-expiry", r.At.Before(g[i]), "refresh %d arrived %v after the grant expired", i+1, r.At.Sub(g[i]))
		same := string(r.Params["name"]) == string(subs[0].Params["name"]) && string(r.Params["arguments"]) == string(subs[0].Params["arguments"]) && deliveryURL(r) == deliveryURL(subs[0])
		check(t, "sep-9999-client-refresh-before-expiry", same, "refresh %d changed the subscription key", i+1)
	}
	later := subscribesOf(mk, cursorlessType)
	check(t, "sep-9999-client-null-cursor-not-replayed", len(later) >= 2, "the client never resubscribed to %s", cursorlessType)
	for _, r := range later[1:] {
		check(t, "sep-9999-client-null-cursor-not-replayed", cursorOf(r.Params) == "null", "a resubscribe sent cursor %s", cursorOf(r.Params))
	}
}

func subscribesOf(mk *mock, name string) []recorded {
	var out []recorded
	for _, r := range mk.requests(events.MethodSubscribe) {
		if string(r.Params["name"]) == `"`+name+`"` {
			out = append(out, r)
		}
	}
	return out
}

func deliveryURL(r recorded) string {
	var d struct {
		URL string `json:"url"`
	}
	json.Unmarshal(r.Params["delivery"], &d)
	return d.URL
}
