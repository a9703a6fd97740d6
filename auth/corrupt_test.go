package auth

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// corruptStore is a TokenStore whose stored token and registration do
// not open (a value another replica sealed under another key, or garbled
// in the store) until they are written anew, as a shared store reports
// them: an error matching ErrCorruptValue.
type corruptStore struct {
	MemoryStore
	mu             sync.Mutex
	tokBad, regBad bool // guarded by mu
}

func (s *corruptStore) LoadToken(ctx context.Context, key string) (*Token, error) {
	s.mu.Lock()
	bad := s.tokBad
	s.mu.Unlock()
	if bad {
		return nil, fmt.Errorf("teststore: load token: %w", ErrCorruptValue)
	}
	return s.MemoryStore.LoadToken(ctx, key)
}

func (s *corruptStore) SaveToken(ctx context.Context, key string, tok *Token) error {
	s.mu.Lock()
	s.tokBad = false
	s.mu.Unlock()
	return s.MemoryStore.SaveToken(ctx, key, tok)
}

func (s *corruptStore) LoadClient(ctx context.Context, issuer string) (*ClientRegistration, error) {
	s.mu.Lock()
	bad := s.regBad
	s.mu.Unlock()
	if bad {
		return nil, fmt.Errorf("teststore: load client: %w", ErrCorruptValue)
	}
	return s.MemoryStore.LoadClient(ctx, issuer)
}

func (s *corruptStore) SaveClient(ctx context.Context, issuer string, reg *ClientRegistration) error {
	s.mu.Lock()
	s.regBad = false
	s.mu.Unlock()
	return s.MemoryStore.SaveClient(ctx, issuer, reg)
}

// TestCorruptStoredValuesReplaced: a stored token and registration that
// do not open (ErrCorruptValue) are taken as absent, so that the next
// authorization replaces them, instead of failing every request until
// someone deletes them from the store.
func TestCorruptStoredValuesReplaced(t *testing.T) {
	s := newTestServer(t, nil)
	s.addClient(&tClient{id: "svc", secret: "pw", method: "client_secret_basic"})
	store := &corruptStore{tokBad: true, regBad: true}
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw", Store: store})
	ctx := testCtx(t)
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatalf("a request with a corrupt stored token = %v, want it authorized anew", err)
	}
	if tok, err := store.LoadToken(ctx, c.key); err != nil || tok == nil {
		t.Errorf("stored token after the authorization = %v, %v; want the new one", tok, err)
	}
	// A second client finds the token the first saved.
	c2 := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw", Store: store})
	if err := call(ctx, c2, s.mcpURL()); err != nil {
		t.Fatalf("a second client = %v", err)
	}
	// Interactive: a corrupt registration is registered anew.
	store2 := &corruptStore{tokBad: true, regBad: true}
	u := authorized(t, s, store2)
	if tok, err := store2.LoadToken(ctx, u.key); err != nil || tok == nil {
		t.Errorf("stored token after an interactive authorization = %v, %v", tok, err)
	}
}
