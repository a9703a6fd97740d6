package client_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// probes counts the server/discover probes of a negotiation trace.
func probes(c *client.Client) int {
	n := 0
	for _, s := range c.NegotiationTrace() {
		if s.Step == "probe" {
			n++
		}
	}
	return n
}

// eraCaches are the era caches the zero-RTT tests run with.
func eraCaches(t *testing.T) map[string]func() client.EraCache {
	return map[string]func() client.EraCache{
		"memory": func() client.EraCache { return &client.MemoryEraCache{} },
		"file": func() client.EraCache {
			return client.NewFileEraCache(filepath.Join(t.TempDir(), "eras.json"))
		},
	}
}

// knownServer is what a client knows of its server.
type knownServer struct {
	Info         *protocol.Implementation
	Instructions string
	Caps         protocol.ServerCapabilities
}

func known(c *client.Client) knownServer {
	return knownServer{c.ServerInfo(), c.Instructions(), c.ServerCapabilities()}
}

// TestEraCacheKnowsServer: a reconnect that takes a cached modern verdict
// (no probe) knows the server as well as the full negotiation did, and
// strict capabilities let its calls through; once the remembered
// server/discover result is stale, the reconnect discovers again.
func TestEraCacheKnowsServer(t *testing.T) {
	for _, tr := range []string{tStdio, tHTTP} {
		for name, newCache := range eraCaches(t) {
			t.Run(tr+"/"+name, func(t *testing.T) {
				cache := newCache()
				so := testserver.Options{TTL: time.Minute}
				opts := []client.Option{client.WithEraCache(cache), client.WithStrictCapabilities()}
				if tr == tStdio {
					// The key of an HTTP server is its URL, new per test
					// server; both stdio connections run the same command.
					opts = append(opts, client.WithServerKey("stdio-server"))
				}
				first := connect(t, tr, so, opts...)
				if probes(first.c) != 1 || first.c.Era() != negotiation.EraModern {
					t.Fatalf("first connection: era %v, trace %+v; want one probe, modern", first.c.Era(), first.c.NegotiationTrace())
				}
				want := known(first.c)
				if want.Info == nil || want.Instructions == "" || want.Caps.Tools == nil {
					t.Fatalf("first connection knows %+v, want info, instructions and the tools capability", want)
				}
				url := ""
				if first.ts != nil {
					url = first.ts.URL
				}
				first.c.Close()

				second := reconnect(t, tr, url, so, opts...)
				if n := probes(second); n != 0 {
					t.Errorf("second connection probed %d times, want the cached verdict (trace %+v)", n, second.NegotiationTrace())
				}
				if diff := cmp.Diff(want, known(second)); diff != "" {
					t.Errorf("zero-RTT reconnect knows (-full +cached):\n%s", diff)
				}
				if _, err := second.ListTools(testCtx(t), ""); err != nil {
					t.Errorf("Tools with strict capabilities after a cached verdict: %v", err)
				}
				second.Close()

				// An hour later the remembered discover result is stale:
				// the reconnect discovers again and still knows the server.
				later := func() time.Time { return time.Now().Add(time.Hour) }
				third := reconnect(t, tr, url, so, append(opts, client.WithClock(later))...)
				if n := probes(third); n != 1 {
					t.Errorf("stale record: %d probes, want 1 (trace %+v)", n, third.NegotiationTrace())
				}
				if diff := cmp.Diff(want, known(third)); diff != "" {
					t.Errorf("reconnect after a stale record knows (-full +got):\n%s", diff)
				}
			})
		}
	}
}

// TestEraCacheBareHintStrict: a modern record without a server/discover
// result (written by another cache user, or by an older version) is no
// zero-RTT hint: the client probes and knows the server, so strict
// capabilities refuse nothing.
func TestEraCacheBareHintStrict(t *testing.T) {
	cache := &client.MemoryEraCache{}
	cache.StoreEra("bare", client.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728})
	f := connect(t, tStdio, testserver.Options{}, client.WithEraCache(cache), client.WithServerKey("bare"), client.WithStrictCapabilities())
	if f.c.ServerInfo() == nil || f.c.ServerCapabilities().Tools == nil {
		t.Errorf("client knows %+v after a bare hint, want the server's description", known(f.c))
	}
	if _, err := f.c.ListTools(testCtx(t), ""); err != nil {
		t.Errorf("Tools with strict capabilities: %v", err)
	}
}

// reconnect connects again to the server of f (HTTP: the same test server
// at url; stdio: a new child process with so).
func reconnect(t *testing.T, tr string, url string, so testserver.Options, opts ...client.Option) *client.Client {
	t.Helper()
	if tr == tStdio {
		return connect(t, tStdio, so, opts...).c
	}
	c, err := client.Dial(testCtx(t), url, opts...)
	if err != nil {
		t.Fatalf("Dial again: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
