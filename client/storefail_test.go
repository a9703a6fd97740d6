package client_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// errStoreDown is what the flaky stores below return while down.
var errStoreDown = errors.New("store unreachable")

// flakyCache is a user's cache store (here the in-memory one) that fails
// every call while down is set.
type flakyCache struct {
	cache.Store
	down atomic.Bool
}

func (f *flakyCache) LoadResult(ctx context.Context, k cache.Key) (cache.Entry, bool, error) {
	if f.down.Load() {
		return cache.Entry{}, false, errStoreDown
	}
	return f.Store.LoadResult(ctx, k)
}

func (f *flakyCache) StoreResult(ctx context.Context, k cache.Key, e cache.Entry) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.Store.StoreResult(ctx, k, e)
}

// flakyEras is an era store that fails every call while down is set.
type flakyEras struct {
	cache.EraStore
	down atomic.Bool
}

func (f *flakyEras) LoadEra(ctx context.Context, k string) (cache.EraRecord, bool, error) {
	if f.down.Load() {
		return cache.EraRecord{}, false, errStoreDown
	}
	return f.EraStore.LoadEra(ctx, k)
}

func (f *flakyEras) StoreEra(ctx context.Context, k string, r cache.EraRecord) error {
	if f.down.Load() {
		return errStoreDown
	}
	return f.EraStore.StoreEra(ctx, k, r)
}

// logCounter is a slog.Handler counting records per level.
type logCounter struct {
	mu sync.Mutex
	n  map[slog.Level]int
}

func (h *logCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *logCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *logCounter) WithGroup(string) slog.Handler            { return h }
func (h *logCounter) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == nil {
		h.n = map[slog.Level]int{}
	}
	h.n[r.Level]++
	return nil
}

func (h *logCounter) count(l slog.Level) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n[l]
}

// TestCacheStoreFailureDegrades: while the cache store fails, calls
// succeed uncached and the failure is logged once; once it works again
// that is logged once and caching resumes.
func TestCacheStoreFailureDegrades(t *testing.T) {
	srv := testserver.New(testserver.Options{TTL: time.Minute, CacheScope: "public"})
	t.Cleanup(func() { srv.Close() })
	store := &flakyCache{Store: cache.NewMemory(0)}
	logs := &logCounter{}
	c := pipeClient(t, srv, client.WithProtocol(client.Modern), client.WithCache(store), client.WithLogger(slog.New(logs)))
	store.down.Store(true)
	for range 3 {
		drainTools(t, c)
	}
	if n := count(srv, "tools/list"); n != 3 {
		t.Errorf("with the store down: tools/list sent %d times, want 3 (each call uncached)", n)
	}
	if n := logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("store failure logged %d times, want once", n)
	}
	store.down.Store(false)
	drainTools(t, c)
	drainTools(t, c)
	if n := count(srv, "tools/list"); n != 4 {
		t.Errorf("with the store back: tools/list sent %d times in all, want 4 (one more, then cached)", n)
	}
	if n := logs.count(slog.LevelInfo); n != 1 {
		t.Errorf("store recovery logged %d times, want once", n)
	}
}

// TestEraStoreFailureDegrades: a failing era store costs the probe, not
// the connection, and is logged once per client.
func TestEraStoreFailureDegrades(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	t.Cleanup(func() { srv.Close() })
	eras := &flakyEras{EraStore: cache.NewMemoryEraStore()}
	eras.down.Store(true)
	logs := &logCounter{}
	c := keyedPipeClient(t, srv, "server", client.WithEraCache(eras), client.WithLogger(slog.New(logs)))
	drainTools(t, c)
	if n := logs.count(slog.LevelWarn); n != 1 {
		t.Errorf("era store failure logged %d times, want once", n)
	}
	eras.down.Store(false)
	c2 := keyedPipeClient(t, srv, "server", client.WithEraCache(eras))
	drainTools(t, c2)
	if _, ok, err := eras.LoadEra(testCtx(t), "server"); !ok || err != nil {
		t.Errorf("with the store back, no record stored: %v, %v", ok, err)
	}
}
