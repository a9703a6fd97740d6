package conduittest_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// The cases of issue 26 that are not cells of the matrix
// (outcome_test.go): a modern server without subscriptions/listen, and
// the words of the events.

// connectWatched connects like connect, and fails the test if Connect
// does not return before watchdog, whatever ctx says: Connect must not
// outlive its context.
func connectWatched(t *testing.T, ctx context.Context, srv *conduittest.Server, via string, opts ...client.Option) *client.Client {
	t.Helper()
	type result struct {
		c   *client.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		switch via {
		case "memory":
			r.c, r.err = client.Connect(ctx, srv.Transport(), opts...)
		default:
			r.c, r.err = client.Dial(ctx, srv.URL(), opts...)
		}
		done <- r
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("Connect over %s = %v", via, r.err)
		}
		t.Cleanup(func() { r.c.Close() })
		return r.c
	case <-time.After(15 * time.Second):
		t.Fatalf("Connect over %s did not return within 15s (its context: 3s)", via)
		return nil
	}
}

// TestListenRefusedConnect: a modern server whose subscriptions/listen is
// missing (-32601) or never acknowledged, with a handler that listens for
// list changes. A server that declares no listChanged is not listened to
// at all; a -32601 to the listen is final (never listened again); a
// listen that is never acknowledged holds Connect no longer than its
// context. Each way Connect returns and the client works (issue 26,
// case 4).
func TestListenRefusedConnect(t *testing.T) {
	tests := []struct {
		name    string
		opts    []conduittest.Option
		listens int // subscriptions/listen the server receives
	}{
		{name: "no-listChanged", opts: []conduittest.Option{conduittest.WithoutListChanged(),
			conduittest.WithFaults(conduittest.FaultRPCError.On("subscriptions/listen").With("code", "-32601"))}, listens: 0},
		{name: "listen-32601", opts: []conduittest.Option{
			conduittest.WithFaults(conduittest.FaultRPCError.On("subscriptions/listen").With("code", "-32601"))}, listens: 1},
		{name: "never-acknowledged", opts: []conduittest.Option{
			conduittest.WithFaults(conduittest.FaultSilent.On("subscriptions/listen"))}, listens: 1},
	}
	for _, tt := range tests {
		for _, via := range []string{"memory", "http"} {
			t.Run(tt.name+"/"+via, func(t *testing.T) {
				t.Parallel()
				srv := conduittest.NewServer(t, append([]conduittest.Option{conduittest.WithEra(conduittest.Modern)}, tt.opts...)...)
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				h := handler.ToolsChangedListenerFunc(func(context.Context) {})
				c := connectWatched(t, ctx, srv, via, client.WithProtocol(client.Modern), client.WithHandler(h))
				if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "hi"}); err != nil {
					t.Fatalf("CallTool after Connect = %v", err)
				}
				// A re-listen would come within 100-200ms of the refusal.
				time.Sleep(300 * time.Millisecond)
				if n := srv.Count("subscriptions/listen"); n != tt.listens {
					t.Errorf("the server received %d subscriptions/listen, want %d", n, tt.listens)
				}
			})
		}
	}
}

// TestOutcomeWords: the events and the error of a lost request say which
// evidence decided, in words (issue 26): the stdio process exited after
// the request was written; the replay policy; a tool never listed whose
// annotations were fetched for the decision.
func TestOutcomeWords(t *testing.T) {
	tests := []struct {
		name  string
		tool  string
		pol   client.ReplayPolicy
		kind  string // the decisive event
		words []string
	}{
		{name: "refused-policy", tool: "echo", pol: client.ReplayNone, kind: "replay-refused",
			words: []string{"the stdio process exited after the request was written", "not sent again: the replay policy is none"}},
		{name: "refused-annotations", tool: "echo", pol: client.ReplaySafe, kind: "replay-refused",
			words: []string{"the stdio process exited after the request was written", "tool echo is not annotated readOnlyHint or idempotentHint"}},
		{name: "replayed-unlisted", tool: "add", pol: client.ReplaySafe, kind: "replayed",
			words: []string{"the stdio process exited after the request was written", "sent again: tool add is annotated readOnlyHint"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := conduittest.NewServer(t, conduittest.WithFaults(conduittest.FaultExitAfter.On("tools/call").Times(1)))
			var events eventLog
			c := connect(t, srv, "stdio", mOptions(conduittest.Modern, tt.pol, &events)...)
			_, err := c.CallTool(testCtx(t), tt.tool, map[string]any{"text": "x", "a": 1, "b": 2})
			if !events.wait(tt.kind) {
				t.Fatalf("no %s event; events: %s", tt.kind, events.String())
			}
			reason := events.reason(tt.kind)
			for _, w := range tt.words {
				if !strings.Contains(reason, w) {
					t.Errorf("%s reason %q does not say %q", tt.kind, reason, w)
				}
				if tt.kind == "replay-refused" && (err == nil || !strings.Contains(err.Error(), w)) {
					t.Errorf("error %v does not say %q", err, w)
				}
			}
			if tt.kind == "replay-refused" && !errors.Is(err, client.ErrOutcomeUnknown) {
				t.Errorf("CallTool = %v, want ErrOutcomeUnknown", err)
			}
		})
	}
}

// TestAnnotationsWhenALossNeedsThem: under ReplaySafe, the annotations of
// a tool never listed are fetched only when a loss needs them (one
// tools/list walk after the heal), kept for the next decision, and
// fetched again after a tools list_changed notification (issue 26, case
// 6).
func TestAnnotationsWhenALossNeedsThem(t *testing.T) {
	srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Modern))
	var events eventLog
	c := connect(t, srv, "memory", mOptions(conduittest.Modern, client.ReplaySafe, &events)...)
	args := map[string]any{"a": 1, "b": 2}
	lost := func(wantLists int) {
		t.Helper()
		if err := srv.SetFaults(conduittest.FaultExitAfter.On("tools/call").Times(1)); err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(testCtx(t), "add", args); err != nil {
			t.Fatalf("CallTool of read-only add, lost once = %v, want its replay's result", err)
		}
		if n := srv.Count("tools/list"); n != wantLists {
			t.Errorf("tools/list received %d times, want %d", n, wantLists)
		}
	}
	if _, err := c.CallTool(testCtx(t), "add", args); err != nil {
		t.Fatal(err)
	}
	if n := srv.Count("tools/list"); n != 0 {
		t.Fatalf("a call that was not lost listed the tools (%d tools/list)", n)
	}
	lost(1) // fetched for the decision
	lost(1) // kept
	sub, err := c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	srv.NotifyToolsChanged()
	for ev := range sub.Events() {
		if ev.Method == protocol.NotificationToolsListChanged && !ev.Resync {
			break // the client forgot the listing before delivering the event
		}
	}
	lost(2) // fetched again after list_changed
	if runs := srv.Executions("add"); runs != 7 {
		t.Errorf("add ran %d times, want 7 (1, then 2 for each of the 3 losses)", runs)
	}
}
