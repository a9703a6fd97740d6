package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/cache"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestCallToolNilArguments: a nil json.RawMessage, nil []byte, nil map
// or empty RawMessage means "no arguments".
func TestCallToolNilArguments(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	for _, tc := range []struct {
		name string
		args any
	}{
		{"nil RawMessage", json.RawMessage(nil)},
		{"empty RawMessage", json.RawMessage{}},
		{"nil bytes", []byte(nil)},
		{"nil map", map[string]any(nil)},
		{"nil", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.c.CallTool(testCtx(t), "structured", tc.args)
			if err != nil || res.Failed() {
				t.Fatalf("CallTool(structured, %#v) = %+v, %v", tc.args, res, err)
			}
		})
	}
	if _, err := f.c.CallTool(testCtx(t), "structured", json.RawMessage(`[1]`)); !errors.As(err, new(*handler.ValidationError)) {
		t.Errorf("CallTool with an array = %v, want a *ValidationError", err)
	}
}

// messageLog records what WithMessageLog reports.
type messageLog struct {
	mu   sync.Mutex
	msgs []string // "send server/discover", "recv response", …
}

func (l *messageLog) hook(sent bool, msg jsonrpc.Message) {
	s := "recv "
	if sent {
		s = "send "
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		s += m.Method
	case *jsonrpc.Response:
		s += "response"
	}
	l.mu.Lock()
	l.msgs = append(l.msgs, s)
	l.mu.Unlock()
}

func (l *messageLog) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if m == s {
			return true
		}
	}
	return false
}

// TestMessageLog: every transport reports the messages of both directions,
// negotiation included.
func TestMessageLog(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		var l messageLog
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p), client.WithMessageLog(l.hook))
		if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		handshake := "send server/discover"
		if p == client.Legacy {
			handshake = "send initialize"
		}
		for _, want := range []string{handshake, "send tools/list", "recv response"} {
			if !l.has(want) {
				t.Errorf("message log lacks %q: %v", want, l.msgs)
			}
		}
	})
}

// TestCacheRequestStateOnlyRound: a resources/read result reached through
// an MRTR round that carried requestState alone (no input requests, so
// no handler ran) is not cached.
func TestCacheRequestStateOnlyRound(t *testing.T) {
	// The first read is answered with requestState alone, its retry with
	// a cacheable result.
	srv := testserver.New(testserver.Options{TTL: time.Minute, Faults: []testserver.Fault{
		{Kind: testserver.FaultResult, Method: "resources/read", Times: 1,
			Result: json.RawMessage(`{"resultType":"input_required","requestState":"shed-1"}`)},
		{Kind: testserver.FaultResult, Method: "resources/read", Times: 1,
			Result: json.RawMessage(`{"resultType":"complete","contents":[{"uri":"file:///hello.txt","text":"shed"}],"ttlMs":60000}`)},
	}})
	t.Cleanup(func() { srv.Close() })
	c := pipeClient(t, srv, client.WithProtocol(client.Modern), client.WithCache(cache.NewMemory(0)))
	ctx := testCtx(t)
	readHello(t, ctx, c, 2)
	// Round 1 (input_required), its retry, then the second read: not
	// served from the cache.
	if n := count(srv, "resources/read"); n != 3 {
		t.Errorf("resources/read sent %d times, want 3 (the MRTR result must not be cached)", n)
	}
	// The second read's result was plain: it is cached.
	if _, err := c.ReadResource(ctx, "file:///hello.txt"); err != nil {
		t.Fatalf("ReadResource: %v", err)
	}
	if n := count(srv, "resources/read"); n != 3 {
		t.Errorf("resources/read sent %d times, want 3 (a plain result is cached)", n)
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

// TestAwaitTaskExpired: a task still running after createdAt + ttl ends
// the wait with an *Error of kind timeout naming the task instead of
// polling on; no deadline of the caller's elapsed, so it does not match
// context.DeadlineExceeded.
func TestAwaitTaskExpired(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			t.Parallel()
			// The client's clock runs two minutes ahead: the test server's
			// tasks live one minute.
			late := func() time.Time { return time.Now().Add(2 * time.Minute) }
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}), client.WithClock(late))
			ctx := testCtx(t)
			task, _, err := f.c.StartTool(ctx, "task", map[string]any{"steps": 1000})
			if err != nil || task == nil {
				t.Fatalf("StartTool = %v, %v", task, err)
			}
			if task.TTL <= 0 || task.CreatedAt == "" {
				t.Fatalf("task without ttl or createdAt: %+v", task)
			}
			_, err = f.c.AwaitTask(ctx, task)
			ce, ok := errors.AsType[*client.Error](err)
			if !ok || !strings.Contains(err.Error(), task.ID) || !strings.Contains(err.Error(), "expired") ||
				errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("AwaitTask = %v, want an *Error saying that task %s expired, not matching context.DeadlineExceeded", err, task.ID)
			}
			if ce.Kind != client.KindTimeout || ce.Op != "tools/call" {
				t.Errorf("Op %q Kind %v, want tools/call timeout", ce.Op, ce.Kind)
			}
			_ = f.c.CancelTask(ctx, task.ID)
		})
	}
}

// TestCacheOAuthPartition: clients using an *auth.Client as
// Auth{Tokens: a} with different credentials do not share private cache
// entries; the same credentials do; the requests carry the tokens.
func TestCacheOAuthPartition(t *testing.T) {
	srv := testserver.New(testserver.Options{Era: testserver.ModernOnly, TTL: time.Minute, CacheScope: protocol.CacheScopePrivate})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	url := ts.URL + "/mcp"
	shared := cache.NewMemory(0)
	dial := func(token string) *client.Client {
		t.Helper()
		store := &auth.MemoryStore{}
		key, err := auth.CanonicalResource(url)
		if err != nil {
			t.Fatal(err)
		}
		if err := store.SaveToken(context.Background(), key, &auth.Token{AccessToken: token, TokenType: "Bearer", Expiry: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		a, err := auth.New(auth.Config{ServerURL: url, Store: store, Method: auth.ClientCredentials, ClientID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		c, err := client.Dial(testCtx(t), url, client.WithProtocol(client.Modern), client.WithCache(shared), client.WithAuth(client.Auth{Tokens: a}))
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	var got []int
	for _, token := range []string{"alice", "bob", "alice"} {
		drainTools(t, dial(token))
		got = append(got, count(srv, "tools/list"))
	}
	if diff := cmp.Diff([]int{1, 2, 2}, got); diff != "" {
		t.Errorf("tools/list sent (cumulative, -want +got):\n%s", diff)
	}
	for _, r := range srv.Received() {
		if r.Method == "tools/list" && !strings.HasPrefix(r.Headers.Get("Authorization"), "Bearer ") {
			t.Errorf("tools/list without a token: %v", r.Headers)
		}
	}
}

// TestCacheInputRounds: a cacheable resources/read result reached through
// an MRTR round that ran a handler (elicitation, sampling, roots) is not
// cached; the plain result of the next read is.
func TestCacheInputRounds(t *testing.T) {
	h := struct {
		handler.ElicitorFunc
		handler.SamplerFunc
		handler.RootsListerFunc
	}{
		func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
			return &protocol.ElicitResult{Action: protocol.ElicitDecline}, nil
		},
		func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			return &protocol.CreateMessageResult{Role: "assistant", Content: json.RawMessage(`{"type":"text","text":"hi"}`), Model: "m"}, nil
		},
		func(context.Context) ([]protocol.Root, error) { return nil, nil },
	}
	tests := []struct {
		name  string
		input string
	}{
		{"elicitation", `{"method":"elicitation/create","params":{"message":"ok?","requestedSchema":{"type":"object","properties":{}}}}`},
		{"sampling", `{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":5}}`},
		{"roots", `{"method":"roots/list"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.New(testserver.Options{TTL: time.Minute, Faults: []testserver.Fault{
				{Kind: testserver.FaultResult, Method: "resources/read", Times: 1,
					Result: json.RawMessage(`{"resultType":"input_required","inputRequests":{"in":` + tt.input + `}}`)},
				{Kind: testserver.FaultResult, Method: "resources/read", Times: 1,
					Result: json.RawMessage(`{"resultType":"complete","contents":[{"uri":"file:///hello.txt","text":"asked"}],"ttlMs":60000,"cacheScope":"public"}`)},
			}})
			t.Cleanup(func() { srv.Close() })
			c := pipeClient(t, srv, client.WithProtocol(client.Modern), client.WithCache(cache.NewMemory(0)),
				client.WithHandler(h))
			ctx := testCtx(t)
			readHello(t, ctx, c, 3)
			// The input round, its retry, the second (plain) read; the
			// third read is served from the cache.
			if n := count(srv, "resources/read"); n != 3 {
				t.Errorf("resources/read sent %d times, want 3", n)
			}
		})
	}
}

// readHello reads file:///hello.txt n times, failing the test on an error.
func readHello(t *testing.T, ctx context.Context, c *client.Client, n int) {
	t.Helper()
	for range n {
		if _, err := c.ReadResource(ctx, "file:///hello.txt"); err != nil {
			t.Fatalf("ReadResource: %v", err)
		}
	}
}
