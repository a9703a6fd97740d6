package client_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestKeepAliveHealsSilentPeer: with RetryPolicy.KeepAlive, a peer that
// leaves one keepalive (ping; server/discover in the modern era)
// unanswered is treated as gone: a "keepalive-timeout" event, then the
// connection is healed (the stdio process respawned, the HTTP and
// WebSocket connection made again) and the era re-negotiated, and the
// next call works. Issue 29, item 4.
func TestKeepAliveHealsSilentPeer(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tStdio, tHTTP, tWS} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				method, skip := protocol.MethodPing, 0
				if era.p == client.Modern {
					method, skip = protocol.MethodDiscover, 1 // the connect probe answers
				}
				so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultSilent, Method: method, Skip: skip, Times: 1}}}
				var kinds record[string]
				opts := []client.Option{client.WithProtocol(era.p),
					client.WithRetry(client.RetryPolicy{KeepAlive: 100 * time.Millisecond, KeepAliveTimeout: 300 * time.Millisecond}),
					client.WithConnEvents(func(ev client.ConnEvent) { kinds.add(ev.Kind) })}
				var c *client.Client
				if tr == tStdio {
					c = connectStdioOnce(t, so, opts...)
				} else {
					c = connect(t, tr, so, opts...).c
				}
				if !eventually(func() bool {
					k := kinds.all()
					i := slices.Index(k, "keepalive-timeout")
					return i >= 0 && slices.Contains(k[i:], "era-pinned")
				}) {
					t.Fatalf("events %v, want keepalive-timeout then era-pinned (healed)", kinds.all())
				}
				if tr == tStdio && !slices.Contains(kinds.all(), "respawned") {
					t.Errorf("events %v, want respawned", kinds.all())
				}
				if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "after"}); err != nil {
					t.Errorf("CallTool after the heal: %v", err)
				}
			})
		}
	}
}

// TestKeepAliveOffByDefault: without KeepAlive the client sends nothing
// on its own.
func TestKeepAliveOffByDefault(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Legacy))
	f.srv.Reset()
	time.Sleep(300 * time.Millisecond)
	if n := count(f.srv, protocol.MethodPing); n != 0 {
		t.Errorf("%d pings without a keepalive, want 0", n)
	}
}

// connectStdioOnce connects to this test binary as a stdio server whose
// faults apply to the first process only (a respawned one is healthy).
func connectStdioOnce(t *testing.T, so testserver.Options, opts ...client.Option) *client.Client {
	t.Helper()
	spec, err := json.Marshal(stdioOptions{Era: so.Era, Faults: so.Faults, FaultsOnce: filepath.Join(t.TempDir(), "once")})
	if err != nil {
		t.Fatal(err)
	}
	cmd := transport.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{stdioEnv + "=" + string(spec)}
	c, err := client.Connect(testCtx(t), cmd, opts...)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestRelistenPacingSettable: RetryPolicy.ReconnectInitial and
// ReconnectMax pace the re-listens of a subscription whose streams keep
// dropping: capped at 100 ms they come far more often than the default
// pacing allows (TestSubscribeRelistenPaced: at most 10 in 5 s).
func TestRelistenPacingSettable(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 3 seconds")
	}
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern),
		client.WithRetry(client.RetryPolicy{ReconnectInitial: 20 * time.Millisecond, ReconnectMax: 100 * time.Millisecond}))
	sub, err := f.c.Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
	if err != nil {
		t.Fatalf("Subscribe: %v", err)
	}
	defer sub.Close()
	go func() {
		for range sub.Events() {
		}
	}()
	end := time.Now().Add(3 * time.Second)
	for time.Now().Before(end) {
		f.ts.CloseClientConnections()
		time.Sleep(20 * time.Millisecond)
	}
	if n := count(f.srv, "subscriptions/listen"); n <= 10 {
		t.Errorf("subscriptions/listen sent %d times in 3 s with a 100 ms cap, want more than 10", n)
	}
}

// TestGETStreamPacingSettable: the same RetryPolicy fields pace the
// reconnects of a legacy GET stream of a connection made by Dial: five
// failing GETs come within the wait bound (the default pacing, 1 s
// doubling, would take 15 s).
func TestGETStreamPacingSettable(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	var gets record[time.Time]
	inner := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			gets.add(time.Now())
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	h := handler.Funcs{OnToolsChanged: func(context.Context) {}} // the GET stream opens at connect
	c, err := client.Dial(testCtx(t), ts.URL, client.WithProtocol(client.Legacy), client.WithHandler(h),
		client.WithRetry(client.RetryPolicy{ReconnectInitial: 20 * time.Millisecond, ReconnectMax: 40 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !eventually(func() bool { return len(gets.all()) >= 5 }) {
		t.Fatalf("%d GET attempts in the wait bound, want 5", len(gets.all()))
	}
}
