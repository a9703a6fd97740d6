package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/handler"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// fakeClock is a settable clock for cache freshness.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// pipeClient connects a client to srv over a new in-memory pipe.
func pipeClient(t *testing.T, srv *testserver.Server, opts ...client.Option) *client.Client {
	t.Helper()
	return keyedPipeClient(t, srv, "", opts...)
}

// keyedPipe is a pipe transport with a server key.
type keyedPipe struct {
	transport.Transport
	key string
}

func (k keyedPipe) ServerKey() string { return k.key }

// keyedPipeClient is pipeClient over a transport whose ServerKey is key
// (none for "").
func keyedPipeClient(t *testing.T, srv *testserver.Server, key string, opts ...client.Option) *client.Client {
	t.Helper()
	pipe, end := transport.NewPipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStream(context.Background(), end, end)
	}()
	var tr transport.Transport = pipe
	if key != "" {
		tr = keyedPipe{pipe, key}
	}
	c, err := client.Connect(testCtx(t), tr, opts...)
	if err != nil {
		end.Close()
		<-served
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() {
		c.Close()
		end.Close()
		<-served
	})
	return c
}

func count(srv *testserver.Server, method string) int {
	n := 0
	for _, m := range srv.ReceivedMethods() {
		if m == method {
			n++
		}
	}
	return n
}

func drainTools(t *testing.T, c *client.Client) {
	t.Helper()
	for _, err := range c.Tools(testCtx(t)) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
	}
}

func TestCacheFreshStaleInvalidated(t *testing.T) {
	srv := testserver.New(testserver.Options{TTL: time.Minute})
	t.Cleanup(func() { srv.Close() })
	clock := newFakeClock()
	c := pipeClient(t, srv, client.WithProtocol(client.Modern), client.WithCache(cache.NewMemory(0)), client.WithClock(clock.Now))
	ctx := testCtx(t)

	drainTools(t, c)
	drainTools(t, c)
	if n := count(srv, "tools/list"); n != 1 {
		t.Fatalf("fresh: tools/list sent %d times, want 1 (second served from cache)", n)
	}

	clock.Advance(2 * time.Minute)
	drainTools(t, c)
	if n := count(srv, "tools/list"); n != 2 {
		t.Fatalf("stale: tools/list sent %d times, want 2", n)
	}

	rr1, err := c.ReadResource(ctx, "file:///hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	rr2, err := c.ReadResource(ctx, "file:///hello.txt")
	if err != nil || rr2.Contents[0].Text != rr1.Contents[0].Text {
		t.Fatalf("cached ReadResource = %+v, %v", rr2, err)
	}
	if n := count(srv, "resources/read"); n != 1 {
		t.Fatalf("resources/read sent %d times, want 1", n)
	}

	// Invalidation by notifications arriving on a listen stream.
	sub, err := c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true, Resources: []string{"file:///hello.txt"}})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	srv.NotifyToolsChanged()
	waitEvent(t, sub, client.Event{Method: protocol.NotificationToolsListChanged})
	drainTools(t, c)
	if n := count(srv, "tools/list"); n != 3 {
		t.Fatalf("after list_changed: tools/list sent %d times, want 3", n)
	}
	srv.NotifyResourceUpdated("file:///hello.txt")
	waitEvent(t, sub, client.Event{Method: protocol.NotificationResourcesUpdated, URI: "file:///hello.txt"})
	if _, err := c.ReadResource(ctx, "file:///hello.txt"); err != nil {
		t.Fatal(err)
	}
	if n := count(srv, "resources/read"); n != 2 {
		t.Fatalf("after resources/updated: resources/read sent %d times, want 2", n)
	}

}

func TestCacheZeroTTLAndLegacy(t *testing.T) {
	tests := []struct {
		name string
		ttl  time.Duration
		p    client.Protocol
	}{
		{"ttl 0", 0, client.Modern},
		{"hints absent", -1, client.Modern},
		{"legacy", time.Minute, client.Legacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.New(testserver.Options{TTL: tt.ttl})
			t.Cleanup(func() { srv.Close() })
			c := pipeClient(t, srv, client.WithProtocol(tt.p), client.WithCache(cache.NewMemory(0)))
			drainTools(t, c)
			drainTools(t, c)
			if n := count(srv, "tools/list"); n != 2 {
				t.Errorf("tools/list sent %d times, want 2 (nothing cacheable)", n)
			}
		})
	}
}

// identity is a token source that names its authorization context.
type identity struct{ id string }

func (i identity) Token(context.Context) (string, error) { return "token-of-" + i.id, nil }
func (i identity) Identity() string                      { return i.id }

func TestCachePrivatePartition(t *testing.T) {
	srv := testserver.New(testserver.Options{TTL: time.Minute, CacheScope: protocol.CacheScopePrivate})
	t.Cleanup(func() { srv.Close() })
	shared := cache.NewMemory(0)
	// The transports share a ServerKey, so the clients share entries.
	newClient := func(tokens transport.TokenSource) *client.Client {
		return keyedPipeClient(t, srv, "testserver", client.WithProtocol(client.Modern), client.WithCache(shared),
			client.WithAuth(client.Auth{Tokens: tokens}))
	}
	alice := newClient(identity{"alice"})
	drainTools(t, alice)
	bob := newClient(identity{"bob"})
	drainTools(t, bob)
	if n := count(srv, "tools/list"); n != 2 {
		t.Fatalf("another authorization context: tools/list sent %d times, want 2", n)
	}
	alice2 := newClient(identity{"alice"})
	drainTools(t, alice2)
	hashed := newClient(transport.TokenSourceFunc(func(context.Context) (string, error) { return "opaque", nil }))
	drainTools(t, hashed)
	hashed2 := newClient(transport.TokenSourceFunc(func(context.Context) (string, error) { return "opaque", nil }))
	drainTools(t, hashed2)
	if n := count(srv, "tools/list"); n != 3 {
		t.Fatalf("same authorization contexts: tools/list sent %d times, want 3", n)
	}
}

func TestMemoryCacheBound(t *testing.T) {
	ctx := context.Background()
	mc := cache.NewMemory(2)
	exp := time.Now().Add(time.Hour)
	for i, m := range []string{"a", "b", "c"} {
		mc.StoreResult(ctx, cache.Key{Method: m}, cache.Entry{Result: []byte(`{}`), Expires: exp.Add(time.Duration(i))})
	}
	if _, ok, _ := mc.LoadResult(ctx, cache.Key{Method: "a"}); ok {
		t.Error("oldest entry survived past MaxEntries")
	}
	for _, m := range []string{"b", "c"} {
		if _, ok, _ := mc.LoadResult(ctx, cache.Key{Method: m}); !ok {
			t.Errorf("entry %q missing", m)
		}
	}
	mc.DeleteResults(ctx, cache.Selector{Methods: []string{"b"}})
	if _, ok, _ := mc.LoadResult(ctx, cache.Key{Method: "b"}); ok {
		t.Error("DeleteResults left the entry")
	}
}

// waitEvent reads sub's events until want arrives (ignoring resyncs).
func waitEvent(t *testing.T, sub *client.Subscription, want client.Event) {
	t.Helper()
	ctx := testCtx(t)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Fatalf("subscription ended (%v) waiting for %+v", sub.Err(), want)
			}
			if ev == want {
				return
			}
			if !ev.Resync {
				t.Fatalf("event = %+v, want %+v", ev, want)
			}
		case <-ctx.Done():
			t.Fatalf("no event %+v", want)
		}
	}
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

func TestReadCacheHints(t *testing.T) {
	tests := []struct {
		raw       string
		ttl       time.Duration
		wantScope string
	}{
		{`{"ttlMs":1500,"cacheScope":"public"}`, 1500 * time.Millisecond, "public"},
		{`{"resultType":"complete","ttlMs":10,"cacheScope":"private"}`, 10 * time.Millisecond, "private"},
		{`{"ttlMs":10}`, 10 * time.Millisecond, "private"}, // missing scope: private
		{`{"ttlMs":10,"cacheScope":"weird"}`, 10 * time.Millisecond, "private"},
		{`{"cacheScope":"public"}`, 0, "public"},                                  // missing ttl: 0
		{`{"ttlMs":-5,"cacheScope":"public"}`, 0, "public"},                       // negative: 0
		{`{"ttlMs":1.5,"cacheScope":"public"}`, 0, "public"},                      // non-integer: 0
		{`{"ttlMs":"soon","cacheScope":"public"}`, 0, "public"},                   // wrong type: 0
		{`{"resultType":"input_required","ttlMs":99}`, 0, "private"},              // never cacheable
		{`{"ttlMs":1e300,"cacheScope":"public"}`, 365 * 24 * time.Hour, "public"}, // clamped
		{`[1]`, 0, "private"},
	}
	for _, tt := range tests {
		ttl, scope := client.ReadCacheHints([]byte(tt.raw))
		if ttl != tt.ttl || scope != tt.wantScope {
			t.Errorf("readCacheHints(%s) = %v, %q; want %v, %q", tt.raw, ttl, scope, tt.ttl, tt.wantScope)
		}
	}
}

// TestCacheHeaderCredentialsPartition: clients that carry their
// credentials in headers of their own (WithHeaders, or call-default
// WithCallHeaders) rather than through Auth do not share private cache
// entries unless their headers are the same: a result cached for one is
// never served to another.
func TestCacheHeaderCredentialsPartition(t *testing.T) {
	srv := testserver.New(testserver.Options{Era: testserver.ModernOnly, TTL: time.Minute, CacheScope: protocol.CacheScopePrivate})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	shared := cache.NewMemory(0)
	dial := func(opt client.Option) {
		t.Helper()
		c, err := client.Dial(testCtx(t), ts.URL, client.WithProtocol(client.Modern), client.WithCache(shared), opt)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		defer c.Close()
		drainTools(t, c)
	}
	headers := func(name, value string) http.Header { return http.Header{name: {value}} }
	var got []int
	for _, opt := range []client.Option{
		client.WithHeaders(headers("Authorization", "Bearer alice")),
		client.WithHeaders(headers("Authorization", "Bearer bob")),
		client.WithHeaders(headers("X-Api-Key", "carol")),
		client.WithCallDefaults(client.WithCallHeaders(headers("X-Api-Key", "dave"))),
		client.WithHeaders(headers("Authorization", "Bearer alice")),
	} {
		dial(opt)
		got = append(got, count(srv, "tools/list"))
	}
	if diff := cmp.Diff([]int{1, 2, 3, 4, 4}, got); diff != "" {
		t.Errorf("tools/list sent (cumulative, -want +got):\n%s", diff)
	}
}

// flakyTokens is a token source that fails once broken is set.
type flakyTokens struct {
	tok    string
	broken atomic.Bool
}

func (f *flakyTokens) Token(context.Context) (string, error) {
	if f.broken.Load() {
		return "", errors.New("token endpoint unreachable")
	}
	return f.tok, nil
}

// TestCacheTokenFailurePartition: a private result is cached under the
// credential its request carried, even when the token source fails
// between the request and the store, and a client whose token source
// fails is served no private entry: one user's result, stored while her
// token source failed, is never served to another whose token source
// fails too.
func TestCacheTokenFailurePartition(t *testing.T) {
	srv := testserver.New(testserver.Options{Era: testserver.ModernOnly, TTL: time.Minute, CacheScope: protocol.CacheScopePrivate})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { srv.Close(); ts.Close() })
	shared := cache.NewMemory(0)
	dial := func(tokens *flakyTokens, opts ...client.Option) *client.Client {
		t.Helper()
		c, err := client.Dial(testCtx(t), ts.URL, append([]client.Option{client.WithProtocol(client.Modern), client.WithCache(shared),
			client.WithAuth(client.Auth{Tokens: tokens})}, opts...)...)
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// Alice's token source fails right after her listing was answered.
	alice := &flakyTokens{tok: "alice"}
	breakAfterList := func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			res, err := next(ctx, req)
			if req.Method == protocol.MethodToolsList {
				alice.broken.Store(true)
			}
			return res, err
		}
	}
	drainTools(t, dial(alice, client.WithMiddleware(breakAfterList)))
	// Bob's fails once he is connected: his listing cannot be sent, and
	// must not be served from Alice's entry either.
	bob := &flakyTokens{tok: "bob"}
	c := dial(bob)
	bob.broken.Store(true)
	var listErr error
	for _, err := range c.Tools(testCtx(t)) {
		if err != nil {
			listErr = err
			break
		}
	}
	if listErr == nil {
		t.Errorf("Bob listed tools without a token (tools/list sent %d times): another user's private entry was served", count(srv, "tools/list"))
	}
}
