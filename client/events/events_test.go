package events_test

import (
	"errors"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/events"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// fastOpts keep the tests' waits short.
var fastOpts = events.Options{PollFloor: 10 * time.Millisecond, HeartbeatTimeout: 2 * time.Second, MaxBackoff: 200 * time.Millisecond}

func eventsServer(o testserver.EventsOptions) testserver.Options {
	return testserver.Options{Events: &o}
}

// recv returns the next event, failing the test when none comes.
func recv(t *testing.T, sub *events.Subscription) events.Event {
	t.Helper()
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			t.Fatalf("subscription ended: %v", sub.Err())
		}
		return ev
	case <-time.After(waitBound):
		t.Fatal("no event within the wait bound")
	}
	panic("unreachable")
}

// TestUnsupported: without the extension, or in the legacy era, every
// method fails with KindUnsupported / ErrNotSupported and no events/*
// request is sent (events-client-no-extension).
func TestUnsupported(t *testing.T) {
	cases := []struct {
		name string
		so   testserver.Options
		p    client.Protocol
	}{
		{"not-declared", testserver.Options{}, client.Modern},
		{"legacy-era", eventsServer(testserver.EventsOptions{}), client.Legacy},
	}
	for _, tc := range cases {
		for _, tr := range allTransports {
			t.Run(tc.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, tc.so, client.WithProtocol(tc.p))
				ec := events.New(f.c, fastOpts)
				if ec.Supported() {
					t.Error("Supported() = true")
				}
				for _, err := range ec.List(testCtx(t)) {
					checkUnsupported(t, "List", err)
				}
				_, err := ec.Subscribe(testCtx(t), "ticks", events.SubscribeOptions{})
				checkUnsupported(t, "Subscribe", err)
				if f.srv != nil {
					for _, m := range f.srv.ReceivedMethods() {
						if len(m) > 7 && m[:7] == "events/" {
							t.Errorf("sent %s to a server without the extension", m)
						}
					}
				}
			})
		}
	}
}

func checkUnsupported(t *testing.T, what string, err error) {
	t.Helper()
	var ce *client.Error
	if !errors.Is(err, client.ErrNotSupported) || !errors.As(err, &ce) || ce.Kind != client.KindUnsupported {
		t.Errorf("%s: err = %v, want a KindUnsupported *client.Error matching ErrNotSupported", what, err)
	}
}

// TestList lists the event types on every transport.
func TestList(t *testing.T) {
	for _, tr := range allTransports {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, eventsServer(testserver.EventsOptions{}), client.WithProtocol(client.Modern))
			ec := events.New(f.c, fastOpts)
			if !ec.Supported() {
				t.Fatal("Supported() = false")
			}
			var names []string
			for d, err := range ec.List(testCtx(t)) {
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, d.Name+":"+string(d.Delivery[0]))
			}
			if got, want := len(names), 2; got != want || names[0] != "ticks:poll" || names[1] != "cursorless:push" {
				t.Errorf("List = %v, want ticks:poll and cursorless:push", names)
			}
		})
	}
}

// TestSubscribeChoice: an unknown type is KindInvalid, a mode the type
// does not offer KindUnsupported, webhook without a URL KindInvalid.
func TestSubscribeChoice(t *testing.T) {
	f := connect(t, tPipe, eventsServer(testserver.EventsOptions{}), client.WithProtocol(client.Modern))
	ec := events.New(f.c, fastOpts)
	kinds := []struct {
		name string
		opts events.SubscribeOptions
		kind client.Kind
	}{
		{"nope", events.SubscribeOptions{}, client.KindInvalid},
		{"cursorless", events.SubscribeOptions{Mode: events.Poll}, client.KindUnsupported},
		{"ticks", events.SubscribeOptions{Mode: events.Webhook}, client.KindInvalid},
		{"ticks", events.SubscribeOptions{Arguments: []int{1}}, client.KindInvalid},
	}
	for _, k := range kinds {
		_, err := ec.Subscribe(testCtx(t), k.name, k.opts)
		var ce *client.Error
		if !errors.As(err, &ce) || ce.Kind != k.kind {
			t.Errorf("Subscribe(%s, %+v) = %v, want kind %v", k.name, k.opts, err, k.kind)
		}
	}
	sub, err := ec.Subscribe(testCtx(t), "ticks", events.SubscribeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Mode() != events.Push {
		t.Errorf("default mode = %s, want push (the first offered of push, poll)", sub.Mode())
	}
}

// TestPollAndPush: both modes deliver emitted events in order on every
// transport, and the cursor follows them.
func TestPollAndPush(t *testing.T) {
	for _, mode := range []events.Mode{events.Poll, events.Push} {
		for _, tr := range allTransports {
			t.Run(string(mode)+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, eventsServer(testserver.EventsOptions{NextPollMs: 20, HeartbeatMs: 100}), client.WithProtocol(client.Modern))
				ec := events.New(f.c, fastOpts)
				sub, err := ec.Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: mode, Arguments: map[string]any{"filter": "x"}})
				if err != nil {
					t.Fatal(err)
				}
				defer sub.Close()
				var ids []string
				for range 3 {
					ids = append(ids, f.emit(t, "ticks"))
				}
				for _, id := range ids {
					if ev := recv(t, sub); ev.ID != id || ev.Name != "ticks" || ev.Time.IsZero() || string(ev.Data) != `{"n":1}` {
						t.Errorf("event = %+v, want %s", ev, id)
					}
				}
				if !eventually(func() bool { c, ok := sub.Cursor(); return ok && c >= "c-3" }) {
					c, ok := sub.Cursor()
					t.Errorf("Cursor() = %q, %v; want c-3 or later", c, ok)
				}
			})
		}
	}
}

// TestClientCloseEndsSubscription: closing the client ends a
// subscription without error, and its goroutine (goleak checks).
func TestClientCloseEndsSubscription(t *testing.T) {
	for _, mode := range []events.Mode{events.Poll, events.Push} {
		f := connect(t, tPipe, eventsServer(testserver.EventsOptions{}), client.WithProtocol(client.Modern))
		sub, err := events.New(f.c, fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		f.c.Close()
		for range sub.Events() {
		}
		if err := sub.Err(); err != nil {
			t.Errorf("%s: Err after Client.Close = %v, want nil", mode, err)
		}
	}
}

// TestPushTerminated: a terminated stream ends the subscription with
// ErrTerminated and the server's error.
func TestPushTerminated(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP, tStdio} {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, eventsServer(testserver.EventsOptions{}), client.WithProtocol(client.Modern))
			sub, err := events.New(f.c, fastOpts).Subscribe(testCtx(t), "ticks", events.SubscribeOptions{Mode: events.Push})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			if err := f.c.Call(testCtx(t), testserver.MethodTerminateEvents, map[string]any{"name": "ticks"}, nil); err != nil {
				t.Fatal(err)
			}
			for range sub.Events() {
			}
			var rpc *jsonrpc.Error
			if err := sub.Err(); !errors.Is(err, events.ErrTerminated) || !errors.As(err, &rpc) || rpc.Code != -32012 {
				t.Errorf("Err = %v, want ErrTerminated with the server's -32012", err)
			}
		})
	}
}
