package client_test

import (
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

func TestEraCache(t *testing.T) {
	tests := []struct {
		name     string
		era      testserver.Era
		ttl      time.Duration
		hint     *client.EraRecord // pre-seeded (possibly wrong) record
		want     client.EraRecord
		probes   int // server/discover requests over both connections
		wantEra2 negotiation.Era
	}{
		{"legacy remembered", testserver.LegacyOnly, 0, nil, client.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20251125}, 1, negotiation.EraLegacy},
		{"modern remembered", testserver.ModernOnly, time.Minute, nil, client.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}, 1, negotiation.EraModern},
		// ttlMs 0: the remembered discover result is stale at once, so
		// the second connection discovers (probes) again.
		{"modern with ttlMs 0 discovered again", testserver.ModernOnly, 0, nil, client.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}, 2, negotiation.EraModern},
		{"wrong hint re-probed", testserver.LegacyOnly, 0, &client.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728},
			client.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20251125}, -1, negotiation.EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := testserver.New(testserver.Options{Era: tt.era, TTL: tt.ttl})
			ts := httptest.NewServer(srv.Handler())
			t.Cleanup(func() {
				srv.Close()
				ts.Close()
			})
			cache := &client.MemoryEraCache{}
			if tt.hint != nil {
				cache.StoreEra(ts.URL, *tt.hint)
			}
			for i := range 2 {
				c, err := client.Dial(testCtx(t), ts.URL, client.WithEraCache(cache))
				if err != nil {
					t.Fatalf("Dial #%d: %v", i+1, err)
				}
				// A call proves the era (a wrong hint is detected here at the latest).
				var callErr error
				for _, err := range c.Tools(testCtx(t)) {
					if err != nil {
						callErr = err
						break
					}
				}
				if callErr != nil && tt.hint != nil && i == 0 {
					// The session may not recover from the wrong hint within
					// this connection; the client must then forget the
					// record so that the next connection probes.
					t.Logf("Dial #1 with a wrong hint: %v", callErr)
					c.Close()
					continue
				}
				if callErr != nil {
					t.Fatalf("Dial #%d: Tools: %v", i+1, callErr)
				}
				if got := c.Era(); got != tt.wantEra2 {
					t.Errorf("Dial #%d: Era() = %v, want %v", i+1, got, tt.wantEra2)
				}
				c.Close()
			}
			rec, ok := cache.LoadEra(ts.URL)
			if !ok {
				t.Fatal("no record stored")
			}
			if tt.want.Era == negotiation.EraModern && (rec.Discover == "" || rec.DiscoveredAt.IsZero()) {
				t.Errorf("stored modern record %+v lacks the server/discover result", rec)
			}
			rec.Discover, rec.DiscoveredAt = "", time.Time{}
			if diff := cmp.Diff(tt.want, rec); diff != "" {
				t.Errorf("stored record (-want +got):\n%s", diff)
			}
			if n := count(srv, "server/discover"); tt.probes >= 0 && n != tt.probes {
				t.Errorf("server/discover sent %d times over two connections, want %d", n, tt.probes)
			}
		})
	}
}

func TestFileEraCache(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "eras.json")
	a := client.NewFileEraCache(path)
	if _, ok := a.LoadEra("x"); ok {
		t.Fatal("empty cache has a record")
	}
	rec := client.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728}
	a.StoreEra("x", rec)
	a.StoreEra("y", client.EraRecord{Era: negotiation.EraLegacy, Version: protocol.Version20250618})
	b := client.NewFileEraCache(path) // a second instance reads the file
	got, ok := b.LoadEra("x")
	if !ok || got != rec {
		t.Errorf("LoadEra(x) = %+v, %v; want %+v", got, ok, rec)
	}
	b.DeleteEra("x")
	if _, ok := a.LoadEra("x"); ok {
		t.Error("deleted record still present")
	}
	if _, ok := a.LoadEra("y"); !ok {
		t.Error("unrelated record lost")
	}
}

func TestEraCacheStdioKey(t *testing.T) {
	cache := &client.MemoryEraCache{}
	so := testserver.Options{TTL: time.Minute} // the remembered discover result stays fresh
	f := connect(t, tStdio, so, client.WithEraCache(cache))
	if f.c.Era() != negotiation.EraModern {
		t.Fatalf("Era() = %v", f.c.Era())
	}
	f.c.Close() // records the verdict
	f2 := connect(t, tStdio, so, client.WithEraCache(cache))
	var probes int
	for _, s := range f2.c.NegotiationTrace() {
		if s.Sent == protocol.MethodDiscover {
			probes++
		}
	}
	if probes != 0 {
		t.Errorf("second connection probed (%+v), want the remembered verdict", f2.c.NegotiationTrace())
	}
}
