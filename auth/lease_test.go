package auth

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// flakyStore is a shared store (here the in-memory one) whose calls fail
// while down is set, as a network store does when it cannot be reached.
type flakyStore struct {
	*MemoryStore
	down      atomic.Bool
	failSaves atomic.Int32 // SaveToken calls still to fail
}

var errUnreachable = errors.New("store unreachable")

func (f *flakyStore) LoadToken(ctx context.Context, key string) (*Token, error) {
	if f.down.Load() {
		return nil, errUnreachable
	}
	return f.MemoryStore.LoadToken(ctx, key)
}

func (f *flakyStore) SaveToken(ctx context.Context, key string, tok *Token) error {
	if f.down.Load() || f.failSaves.Add(-1) >= 0 {
		return errUnreachable
	}
	return f.MemoryStore.SaveToken(ctx, key, tok)
}

func (f *flakyStore) AcquireLease(ctx context.Context, key, owner string) (time.Duration, error) {
	if f.down.Load() {
		return 0, errUnreachable
	}
	return f.MemoryStore.AcquireLease(ctx, key, owner)
}

// warnCounter is a slog.Handler counting warnings.
type warnCounter struct{ n atomic.Int32 }

func (h *warnCounter) Enabled(context.Context, slog.Level) bool { return true }
func (h *warnCounter) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *warnCounter) WithGroup(string) slog.Handler            { return h }
func (h *warnCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelWarn {
		h.n.Add(1)
	}
	return nil
}

// TestStoreDownKeepsHeldToken: while the shared store fails, a token due
// for refresh but still valid keeps being used (logged once); an expired
// one fails with a *StoreError rather than refreshing without the lease;
// once the store is back, one refresh happens.
func TestStoreDownKeepsHeldToken(t *testing.T) {
	s := newTestServer(t, nil)
	store := &flakyStore{MemoryStore: &MemoryStore{}}
	logs := &warnCounter{}
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect, Store: store, Logger: slog.New(logs)})
	ctx := testCtx(t)
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatalf("initial authorization: %v", err)
	}
	held, _ := c.Token(ctx)
	var mu sync.Mutex
	offset := time.Hour - 30*time.Second // inside the refresh skew, not expired
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	store.down.Store(true)
	for range 3 {
		if tok, err := c.Token(ctx); err != nil || tok != held {
			t.Fatalf("Token with the store down = %q, %v; want the held token", tok, err)
		}
	}
	if n := logs.n.Load(); n != 1 {
		t.Errorf("store failure logged %d times, want once", n)
	}
	mu.Lock()
	offset = 2 * time.Hour
	mu.Unlock()
	if _, err := c.Token(ctx); !errorsAs[*StoreError](err) {
		t.Errorf("Token with an expired token and the store down = %v, want a *StoreError", err)
	}
	if got := s.count("refresh_token"); got != 0 {
		t.Errorf("refreshes without the lease = %d, want 0", got)
	}
	store.down.Store(false)
	if tok, err := c.Token(ctx); err != nil || tok == held || tok == "" {
		t.Errorf("Token with the store back = %q, %v; want a new token", tok, err)
	}
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
}

func errorsAs[E error](err error) bool {
	_, ok := errors.AsType[E](err)
	return ok
}

// lockerStore is a store of an older design: it implements only the
// deprecated whole-store Locker.
type lockerStore struct {
	TokenStore
	locks atomic.Int32
	mu    chan struct{}
}

func (l *lockerStore) Lock(ctx context.Context) (func(), error) {
	select {
	case l.mu <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.locks.Add(1)
	return func() { <-l.mu }, nil
}

// TestLockerStillHonored: a store implementing only Locker still has its
// refreshes serialized by it: two Clients refresh once.
func TestLockerStillHonored(t *testing.T) {
	s := newTestServer(t, nil)
	store := &lockerStore{TokenStore: &mapStore{m: map[string]*Token{}}, mu: make(chan struct{}, 1)}
	authorized(t, s, store)
	expireStored(t, store, s)
	before := store.locks.Load()
	toks := concurrentTokens(t, testCtx(t), 4, func(int) *Client {
		return mustNew(t, Config{ServerURL: s.mcpURL(), Store: store})
	})
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
	if store.locks.Load() == before {
		t.Error("the Locker was never taken")
	}
	for _, tok := range toks {
		if tok != toks[0] {
			t.Errorf("clients disagree: %q", toks)
		}
	}
}

// mapStore is a minimal TokenStore without any locking of its own.
type mapStore struct {
	mu sync.Mutex
	m  map[string]*Token
	c  map[string]*ClientRegistration
}

func (s *mapStore) LoadToken(_ context.Context, k string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.m[k]; t != nil {
		cp := *t
		return &cp, nil
	}
	return nil, nil
}

func (s *mapStore) SaveToken(_ context.Context, k string, t *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t == nil {
		delete(s.m, k)
		return nil
	}
	cp := *t
	s.m[k] = &cp
	return nil
}

func (s *mapStore) LoadClient(_ context.Context, k string) (*ClientRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c[k], nil
}

func (s *mapStore) SaveClient(_ context.Context, k string, r *ClientRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.c == nil {
		s.c = map[string]*ClientRegistration{}
	}
	s.c[k] = r
	return nil
}

// TestRefreshedTokenSaveRetried: the store fails just after the
// authorization server rotated the refresh token. The refresher keeps
// the lease and saves again until the store takes the new token, so that
// the next Client does not present the spent refresh token.
func TestRefreshedTokenSaveRetried(t *testing.T) {
	s := newTestServer(t, nil)
	store := &flakyStore{MemoryStore: &MemoryStore{}}
	authorized(t, s, store)
	expireStored(t, store, s)
	ctx := testCtx(t)
	store.failSaves.Store(3)
	a := mustNew(t, Config{ServerURL: s.mcpURL(), Store: store})
	tok, err := a.Token(ctx)
	if err != nil || tok == "" {
		t.Fatalf("Token = %q, %v", tok, err)
	}
	if n := store.failSaves.Load(); n >= 0 {
		t.Fatalf("saves still to fail = %d: the save was not retried", n)
	}
	b := mustNew(t, Config{ServerURL: s.mcpURL(), Store: store})
	if tok2, err := b.Token(ctx); err != nil || tok2 != tok {
		t.Errorf("second Client's Token = %q, %v; want the saved %q", tok2, err, tok)
	}
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
}

// clientSaveFails is the in-memory store whose SaveClient fails.
type clientSaveFails struct{ *MemoryStore }

func (clientSaveFails) SaveClient(context.Context, string, *ClientRegistration) error {
	return errUnreachable
}

// TestSaveClientFailureIsStoreError: a registration the store cannot keep
// fails the flow with a *StoreError (the package doc's promise for a
// failing store), before the user is asked to authorize.
func TestSaveClientFailureIsStoreError(t *testing.T) {
	s := newTestServer(t, nil)
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect,
		Store: clientSaveFails{&MemoryStore{}}})
	err := call(testCtx(t), c, s.mcpURL())
	if se, ok := errors.AsType[*StoreError](err); !ok || se.Op != "save client" || !errors.Is(err, errUnreachable) {
		t.Fatalf("err = %v (%T), want a *StoreError of op \"save client\" wrapping the store's error", err, err)
	}
	if got := s.count("authorize"); got != 0 {
		t.Errorf("authorizations = %d, want 0: the registration was not kept", got)
	}
}
