package client_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

func TestSubscribe(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p))
		ctx := testCtx(t)
		want := client.SubscribeOptions{ToolsListChanged: true, PromptsListChanged: true, Resources: []string{"file:///hello.txt"}}
		sub, err := f.c.Subscribe(ctx, want)
		if err != nil {
			t.Fatalf("Subscribe: %v", err)
		}
		if diff := cmp.Diff(want, sub.Acknowledged()); diff != "" {
			t.Errorf("Acknowledged (-want +got):\n%s", diff)
		}
		if f.srv != nil { // the stdio server runs in a child process
			f.srv.NotifyToolsChanged()
			waitEvent(t, sub, client.Event{Method: protocol.NotificationToolsListChanged})
			f.srv.NotifyResourceUpdated("file:///hello.txt")
			waitEvent(t, sub, client.Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///hello.txt"})
			f.srv.NotifyPromptsChanged()
			waitEvent(t, sub, client.Event{Method: protocol.NotificationPromptsListChanged})
		}
		if err := sub.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if _, ok := <-sub.Events(); ok {
			t.Error("Events() still open after Close")
		}
		if err := sub.Err(); err != nil {
			t.Errorf("Err() after Close = %v, want nil", err)
		}
	})
}

// TestSubscribeLegacyListChangedHTTP: a legacy subscription to list
// changes alone (no resources/subscribe) over Streamable HTTP receives
// them: the GET stream they arrive on, not opened at connect for a client
// without listeners, opens when the subscription starts.
func TestSubscribeLegacyListChangedHTTP(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Legacy))
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true, PromptsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	f.srv.NotifyToolsChanged()
	waitEvent(t, sub, client.Event{Method: protocol.NotificationToolsListChanged})
	f.srv.NotifyPromptsChanged()
	waitEvent(t, sub, client.Event{Method: protocol.NotificationPromptsListChanged})
}

func TestSubscribeLegacySubset(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy))
	// The server refuses resources/subscribe without a URI.
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{Resources: []string{"file:///hello.txt", ""}})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	want := client.SubscribeOptions{Resources: []string{"file:///hello.txt"}}
	if diff := cmp.Diff(want, sub.Acknowledged()); diff != "" {
		t.Errorf("Acknowledged (-want +got):\n%s", diff)
	}
	// An update of an unsubscribed resource is not delivered; the
	// subscribed one is.
	f.srv.NotifyResourceUpdated("file:///config.json")
	f.srv.NotifyResourceUpdated("file:///hello.txt")
	waitEvent(t, sub, client.Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///hello.txt"})
	sub.Close()
	if n := count(f.srv, "resources/unsubscribe"); n != 1 {
		t.Errorf("resources/unsubscribe sent %d times, want 1", n)
	}
}

// TestSubscribeRelisten drops the HTTP connections under a modern listen
// stream: the subscription re-listens, marks the gap with EventResync and
// keeps delivering.
func TestSubscribeRelisten(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	ctx := testCtx(t)
	sub, err := f.c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	f.ts.CloseClientConnections()
	waitEvent(t, sub, client.Event{Resync: true})
	f.srv.NotifyToolsChanged()
	waitEvent(t, sub, client.Event{Method: protocol.NotificationToolsListChanged})
	if n := count(f.srv, "subscriptions/listen"); n < 2 {
		t.Errorf("subscriptions/listen sent %d times, want at least 2", n)
	}
}

// TestSubscribeServerEnds: a graceful end by the server ends the
// subscription without error and without re-listening.
func TestSubscribeServerEnds(t *testing.T) {
	for _, tr := range []string{tPipe, tHTTP, tWS} {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Modern))
			sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
			if err != nil {
				t.Fatalf("Subscribe: %v", err)
			}
			f.srv.EndListens()
			for range sub.Events() {
			}
			if err := sub.Err(); err != nil {
				t.Errorf("Err() = %v, want nil", err)
			}
			if n := count(f.srv, "subscriptions/listen"); n != 1 {
				t.Errorf("subscriptions/listen sent %d times, want 1", n)
			}
		})
	}
}

func TestSubscribeStrict(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern), client.WithCapabilityOptions(client.CapabilityOptions{Strict: true}))
	// The test server advertises everything; ask for nothing unusual and
	// expect success, then check closed clients fail.
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	f.c.Close()
	for range sub.Events() {
	}
	if _, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Subscribe after Close = %v, want ErrClosed", err)
	}
}

// TestSubscribeRespawn: the stdio server process exits; the session
// starts a new one and the subscription listens again on it (a new
// process has no memory of the old listen).
func TestSubscribeRespawn(t *testing.T) {
	so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultExit, Method: "tools/call"}}}
	f := connect(t, tStdio, so, client.WithProtocol(client.Modern))
	ctx := testCtx(t)
	sub, err := f.c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	_, err = f.c.CallTool(ctx, "echo", map[string]any{"text": "bye"}, client.WithReplay(client.ReplayNone))
	if err == nil {
		t.Fatal("CallTool that kills the server succeeded")
	}
	waitEvent(t, sub, client.Event{Resync: true})
	if diff := cmp.Diff(client.SubscribeOptions{ToolsListChanged: true}, sub.Acknowledged()); diff != "" {
		t.Errorf("Acknowledged after re-listen (-want +got):\n%s", diff)
	}
	// The new process serves requests.
	if _, err := f.c.ListTools(ctx, ""); err != nil {
		t.Errorf("ListTools after the respawn = %v", err)
	}
}

// TestSubscribeBuffer: SubscribeOptions.Buffer sizes the subscription's
// buffer (64 when zero) in both eras; a consumer that does not read
// loses the oldest events beyond it, and a resync marker tells it so.
func TestSubscribeBuffer(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p))
			for _, tc := range []struct{ buffer, want int }{{3, 3}, {0, 64}, {-1, 64}} {
				sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true, Buffer: tc.buffer})
				if err != nil {
					t.Fatalf("Subscribe(Buffer %d): %v", tc.buffer, err)
				}
				if got := cap(sub.Events()); got != tc.want {
					t.Errorf("Buffer %d: the events channel holds %d, want %d", tc.buffer, got, tc.want)
				}
				if diff := cmp.Diff(client.SubscribeOptions{ToolsListChanged: true}, sub.Acknowledged()); diff != "" {
					t.Errorf("Acknowledged (-want +got):\n%s", diff)
				}
				sub.Close()
			}
		})
	}
}

// TestSubscribeBufferOverflow: a legacy subscription with Buffer 3 whose
// consumer reads nothing while eleven notifications arrive keeps the
// newest ones behind a resync marker. The handler's listener runs after
// the subscription got a notification (on the same goroutine), so its
// call for the last one says every notification reached the buffer.
func TestSubscribeBufferOverflow(t *testing.T) {
	last := make(chan struct{})
	arrived := sync.OnceFunc(func() { close(last) })
	h := handler.Funcs{OnPromptsChanged: func(context.Context) { arrived() }}
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy), client.WithHandler(h))
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true, PromptsListChanged: true, Buffer: 3})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	for range 10 {
		f.srv.NotifyToolsChanged()
	}
	f.srv.NotifyPromptsChanged()
	select {
	case <-last:
	case <-testCtx(t).Done():
		t.Fatal("the last notification never arrived")
	}
	var got []client.Event
	for len(sub.Events()) > 0 {
		got = append(got, <-sub.Events())
	}
	// Nine of the ten tools notifications were dropped; the markers
	// queued in between were dropped too, each passing its count on.
	want := []client.Event{{Method: protocol.NotificationToolsListChanged}, {Resync: true, Dropped: 9},
		{Method: protocol.NotificationPromptsListChanged}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events after the overflow (-want +got):\n%s", diff)
	}
}

// TestLegacyResubscribeAfterSessionExpiry: when a legacy HTTP session
// expires the client initializes again and re-sends resources/subscribe,
// so updates keep arriving.
func TestLegacyResubscribeAfterSessionExpiry(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Legacy))
	ctx := testCtx(t)
	const uri = "file:///hello.txt"
	sub, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	f.srv.Reset()
	f.srv.AddFault(testserver.Fault{Kind: testserver.FaultExpireSession, Method: "tools/list", Times: 1})
	if _, err := f.c.ListTools(ctx, ""); err != nil {
		t.Fatalf("ListTools across the session expiry: %v", err)
	}
	if n := count(f.srv, "initialize"); n != 1 {
		t.Fatalf("initialize sent %d times after the expiry, want 1", n)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	rec, err := f.srv.WaitReceived(wctx, "resources/subscribe")
	if err != nil {
		t.Fatalf("resources/subscribe not re-sent after the re-initialization: %v", err)
	}
	if !strings.Contains(string(rec.Params), uri) {
		t.Errorf("re-subscribed with %s, want %s", rec.Params, uri)
	}
	// The new session's notification stream may open a moment after the
	// subscription: repeat the update until it arrives (bounded by ctx).
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	f.srv.NotifyResourceUpdated(uri)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended: %v", sub.Err())
			}
			if ev == (client.Event{Method: protocol.NotificationResourcesUpdated, URI: uri}) {
				return
			}
		case <-tick.C:
			f.srv.NotifyResourceUpdated(uri)
		case <-ctx.Done():
			t.Fatal("no update after the re-initialization")
		}
	}
}

// TestSubscribeLegacySharedURI: two legacy subscriptions to the same
// resource share the server's one subscription (resources/subscribe is
// not counted by the server); closing one must not send
// resources/unsubscribe while the other still wants the updates, or the
// other silently stops receiving them.
func TestSubscribeLegacySharedURI(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy))
	ctx := testCtx(t)
	const uri = "file:///hello.txt"
	a, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
	if err != nil {
		t.Fatalf("Subscribe a: %v", err)
	}
	b, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
	if err != nil {
		t.Fatalf("Subscribe b: %v", err)
	}
	defer b.Close()
	a.Close()
	wctx, cancel := context.WithTimeout(ctx, waitBound)
	defer cancel()
	update := client.Event{Method: protocol.NotificationResourcesUpdated, URI: uri}
	f.srv.NotifyResourceUpdated(uri)
	select {
	case ev, ok := <-b.Events():
		if !ok || ev != update {
			t.Fatalf("b's event = %+v, %v; want %+v", ev, ok, update)
		}
	case <-wctx.Done():
		t.Fatalf("b got no update after a closed (resources/unsubscribe sent %d times)", count(f.srv, "resources/unsubscribe"))
	}
	b.Close()
	if n := count(f.srv, "resources/unsubscribe"); n != 1 {
		t.Errorf("resources/unsubscribe sent %d times after both closed, want 1", n)
	}
}

// TestSubscribeLegacySharedURIRefused: two legacy subscriptions to the
// same resource, the server's one subscription made by the first; the
// second's resources/subscribe is refused, or cancelled while in flight
// (it may have run). Closing the first must not leave the server
// subscribed for the second, which does not hold the resource: once both
// are closed, resources/unsubscribe was sent exactly once.
func TestSubscribeLegacySharedURIRefused(t *testing.T) {
	const uri = "file:///hello.txt"
	t.Run("refused", func(t *testing.T) {
		f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy))
		ctx := testCtx(t)
		a, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
		if err != nil {
			t.Fatalf("Subscribe a: %v", err)
		}
		f.srv.AddFault(testserver.Fault{Kind: testserver.FaultRPCError, Method: "resources/subscribe", Times: 1, Code: -32603, Message: "busy"})
		b, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
		if err != nil {
			t.Fatalf("Subscribe b: %v", err)
		}
		if got := b.Acknowledged().Resources; len(got) != 0 {
			t.Fatalf("b.Acknowledged().Resources = %q, want none (refused)", got)
		}
		a.Close()
		b.Close()
		if n := count(f.srv, "resources/unsubscribe"); n != 1 {
			t.Errorf("resources/unsubscribe sent %d times after both closed, want 1", n)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy))
		ctx := testCtx(t)
		a, err := f.c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{uri}})
		if err != nil {
			t.Fatalf("Subscribe a: %v", err)
		}
		f.srv.Reset()
		f.srv.AddFault(testserver.Fault{Kind: testserver.FaultSilent, Method: "resources/subscribe", Times: 1})
		bctx, cancel := context.WithCancel(ctx)
		defer cancel()
		errc := make(chan error, 1)
		go func() {
			b, err := f.c.Subscribe(bctx, client.SubscribeOptions{Resources: []string{uri}})
			if err == nil {
				b.Close()
			}
			errc <- err
		}()
		if _, err := f.srv.WaitReceived(ctx, "resources/subscribe"); err != nil {
			t.Fatalf("b's resources/subscribe not received: %v", err)
		}
		a.Close() // b's subscribe is in flight: b still wants the resource
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("Subscribe b = %v, want context.Canceled", err)
		}
		if n := count(f.srv, "resources/unsubscribe"); n != 1 {
			t.Errorf("resources/unsubscribe sent %d times after both ended, want 1", n)
		}
	})
}
