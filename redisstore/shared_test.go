package redisstore_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/redisstore"
)

// replicaStore is one replica's store: its own Redis connections.
func replicaStore(t *testing.T, r *redisServer) *redisstore.Store {
	return newStore(t, r.client(t), redisstore.Options{})
}

// identity is a token source naming its authorization context.
type identity struct{ id string }

func (i identity) Token(context.Context) (string, error) { return "token-of-" + i.id, nil }
func (i identity) Identity() string                      { return i.id }

func dialReplica(t *testing.T, url string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := client.Dial(testCtx(t), url, opts...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func listPrompts(t *testing.T, c *client.Client) {
	t.Helper()
	for _, err := range c.Prompts(testCtx(t)) {
		if err != nil {
			t.Fatalf("Prompts: %v", err)
		}
	}
}

func countMethod(srv *testserver.Server, method string) int {
	n := 0
	for _, m := range srv.ReceivedMethods() {
		if m == method {
			n++
		}
	}
	return n
}

// TestSharedCacheAcrossReplicas: a public result one replica cached is
// served to another; a private one only to the same authorization
// context, on whichever replica.
func TestSharedCacheAcrossReplicas(t *testing.T) {
	r := startRedis(t)
	a, b := replicaStore(t, r), replicaStore(t, r)
	for _, scope := range []string{protocol.CacheScopePublic, protocol.CacheScopePrivate} {
		t.Run(scope, func(t *testing.T) {
			srv := testserver.New(testserver.Options{TTL: time.Minute, CacheScope: scope})
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(func() { ts.Close(); srv.Close() })
			on := func(s *redisstore.Store, who string) *client.Client {
				return dialReplica(t, ts.URL, client.WithProtocol(client.Modern), client.WithCache(s),
					client.WithAuth(client.Auth{Tokens: identity{who}}))
			}
			listPrompts(t, on(a, "alice"))
			listPrompts(t, on(b, "alice"))
			if n := countMethod(srv, protocol.MethodPromptsList); n != 1 {
				t.Errorf("alice on two replicas: prompts/list reached the server %d times, want 1", n)
			}
			listPrompts(t, on(b, "bob"))
			want := map[string]int{protocol.CacheScopePublic: 1, protocol.CacheScopePrivate: 2}[scope]
			if n := countMethod(srv, protocol.MethodPromptsList); n != want {
				t.Errorf("bob after alice: prompts/list reached the server %d times in all, want %d", n, want)
			}
		})
	}
}

// TestSharedEraAcrossReplicas: the verdict one replica's connection
// settled is taken by another replica's connect, without a probe, and
// that connection knows the server's info and instructions.
func TestSharedEraAcrossReplicas(t *testing.T) {
	r := startRedis(t)
	a, b := replicaStore(t, r), replicaStore(t, r)
	srv := testserver.New(testserver.Options{TTL: time.Minute, Instructions: "use the echo tool",
		ServerInfo: protocol.Implementation{Name: "shared-server", Version: "1.2.3"}})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.Close(); srv.Close() })
	first := dialReplica(t, ts.URL, client.WithEraCache(a))
	if n := probeSteps(first); n != 1 {
		t.Fatalf("first replica: %d probes, want 1", n)
	}
	srv.Reset()
	second := dialReplica(t, ts.URL, client.WithEraCache(b))
	if n := probeSteps(second); n != 0 {
		t.Errorf("second replica: %d probes, want the shared verdict (zero-RTT)", n)
	}
	if got := srv.ReceivedMethods(); len(got) != 0 {
		t.Errorf("second replica's connect sent %v, want nothing", got)
	}
	info := second.ServerInfo()
	if info == nil || info.Name != "shared-server" || info.Version != "1.2.3" || second.Instructions() != "use the echo tool" {
		t.Errorf("second replica knows %+v, %q; want the server's info and instructions", info, second.Instructions())
	}
	if _, err := second.CallTool(testCtx(t), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Errorf("a call on the zero-RTT connection: %v", err)
	}
}

func probeSteps(c *client.Client) int {
	n := 0
	for _, s := range c.Negotiated().Trace {
		if s.Step == "probe" {
			n++
		}
	}
	return n
}
