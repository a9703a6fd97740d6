package redisstore_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/redisstore"
)

// BenchmarkTokenLookup: what a replica pays to read the shared token
// (auth.Client reads the store when it has none, and under the lease)
// through Redis on loopback, against the in-memory store.
func BenchmarkTokenLookup(b *testing.B) {
	tok := &auth.Token{AccessToken: "at-0123456789", RefreshToken: "rt-0123456789", Expiry: time.Now().Add(time.Hour), Issuer: "https://as.example"}
	run := func(b *testing.B, s auth.TokenStore) {
		ctx := context.Background()
		mustOK(b, s.SaveToken(ctx, "https://mcp.example", tok))
		b.ReportAllocs()
		for b.Loop() {
			if t, err := s.LoadToken(ctx, "https://mcp.example"); err != nil || t == nil {
				b.Fatal(t, err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, &auth.MemoryStore{}) })
	b.Run("redis", func(b *testing.B) {
		r := startRedis(b)
		run(b, newStore(b, r.client(b), redisstore.Options{}))
	})
}

// BenchmarkCacheHit: a fresh cached result read from Redis on loopback
// against the in-memory cache (one LoadResult; a listing looks up the
// public partition, then a private one).
func BenchmarkCacheHit(b *testing.B) {
	run := func(b *testing.B, s cache.Store) {
		ctx := context.Background()
		k := cache.Key{Server: "https://mcp.example", Partition: "public", Method: "tools/list"}
		result := []byte(`{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}],"ttlMs":60000,"cacheScope":"public"}`)
		mustOK(b, s.StoreResult(ctx, k, cache.Entry{Result: result, Expires: time.Now().Add(time.Hour), Scope: "public"}))
		b.ReportAllocs()
		for b.Loop() {
			if _, ok, err := s.LoadResult(ctx, k); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, cache.NewMemory(0)) })
	b.Run("redis", func(b *testing.B) {
		r := startRedis(b)
		run(b, newStore(b, r.client(b), redisstore.Options{}))
	})
}

// BenchmarkCachedListing: a whole client call (Prompts, one page) served
// from the cache, the cache in memory or in Redis.
func BenchmarkCachedListing(b *testing.B) {
	run := func(b *testing.B, s cache.Store) {
		srv := testserver.New(testserver.Options{TTL: time.Hour, CacheScope: "public"})
		ts := httptest.NewServer(srv.Handler())
		defer func() { ts.Close(); srv.Close() }()
		c, err := client.Dial(context.Background(), ts.URL, client.WithProtocol(client.Modern), client.WithCache(s))
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		list := func() {
			for _, err := range c.Prompts(context.Background()) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
		list()
		before := countMethod(srv, "prompts/list")
		b.ReportAllocs()
		for b.Loop() {
			list()
		}
		if n := countMethod(srv, "prompts/list"); n != before {
			b.Fatalf("prompts/list reached the server %d times while cached", n-before)
		}
	}
	b.Run("memory", func(b *testing.B) { run(b, cache.NewMemory(0)) })
	b.Run("redis", func(b *testing.B) {
		r := startRedis(b)
		run(b, newStore(b, r.client(b), redisstore.Options{}))
	})
}
