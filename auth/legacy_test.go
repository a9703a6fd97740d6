package auth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// legacyOAuth is the layout of a 2025-03-26 server whose metadata, served
// at its origin's well-known URL, names an issuer with a path (as the
// conformance suite's back-compat server does).
func legacyOAuth(s *testServer) {
	s.noPRM = true
	s.metaIssuer = "/oauth"
	s.issSupported = true
	s.sendIss = true
}

// TestLegacyMetadataIssuer: without Protected Resource Metadata the
// metadata URL is built from the server's origin, not from an issuer, so
// a document naming another issuer is used, and that issuer is the one
// recorded (the authorization response's iss must match it). With
// Protected Resource Metadata the same document is an issuer mismatch.
func TestLegacyMetadataIssuer(t *testing.T) {
	tests := []struct {
		name      string
		configure func(s *testServer)
		wantErr   error
	}{
		{"2025-03-26: issuer with path accepted", legacyOAuth, nil},
		{"2025-03-26: iss must be the document's issuer", func(s *testServer) {
			legacyOAuth(s)
			s.wrongIss = "SELF" // the origin: what the fallback started from
		}, ErrIssuerMismatch},
		{"2025-03-26: iss with a trailing slash rejected", func(s *testServer) {
			legacyOAuth(s)
			s.wrongIss = "SELF/oauth/"
		}, ErrIssuerMismatch},
		{"modern discovery: same document is a mismatch", func(s *testServer) {
			s.metaIssuer = "/oauth"
		}, ErrIssuerMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) {
				tt.configure(s)
			})
			// "SELF" in wrongIss stands for the server's URL, unknown
			// when configure runs.
			if rest, ok := strings.CutPrefix(s.wrongIss, "SELF"); ok {
				s.mu.Lock()
				s.wrongIss = s.URL + rest
				s.mu.Unlock()
			}
			ctx := testCtx(t)
			store := &MemoryStore{}
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect, Store: store})
			err := call(ctx, c, s.mcpURL())
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("call: err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil {
				if s.count("authorization_code") != 0 {
					t.Error("code exchanged despite the issuer mismatch")
				}
				return
			}
			tok, err := store.LoadToken(ctx, s.mcpURL())
			if err != nil || tok == nil {
				t.Fatalf("stored token: %v, %v", tok, err)
			}
			if tok.Issuer != s.URL+"/oauth" || !tok.LegacyDiscovery {
				t.Errorf("token issuer %q, legacy %v; want %q, true", tok.Issuer, tok.LegacyDiscovery, s.URL+"/oauth")
			}
		})
	}
}

// TestLegacyRefresh: a token from the 2025-03-26 fallback is refreshed
// with the metadata at the server's origin again, by the same Client and
// by a new one sharing the store (no metadata cached), and not when the
// origin's metadata has come to name another issuer.
func TestLegacyRefresh(t *testing.T) {
	s := newTestServer(t, legacyOAuth)
	store := &MemoryStore{}
	c := authorized(t, s, store)
	ctx := testCtx(t)
	s.expireAccess()
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatalf("call after expiry: %v", err)
	}
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
	if got := s.count("authorize"); got != 1 {
		t.Errorf("authorizations = %d, want 1 (refreshed, not re-authorized)", got)
	}

	// A new Client (nothing cached) two hours later: the stored token
	// has expired and is refreshed.
	fresh := func(later time.Duration) *Client {
		nc := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect, Store: store})
		nc.now = func() time.Time { return time.Now().Add(later) }
		return nc
	}
	nt, err := fresh(2 * time.Hour).Refresh(ctx)
	if err != nil {
		t.Fatalf("Refresh by a new Client: %v", err)
	}
	if nt.Issuer != s.URL+"/oauth" || !nt.LegacyDiscovery {
		t.Errorf("refreshed token issuer %q, legacy %v", nt.Issuer, nt.LegacyDiscovery)
	}
	if got := s.count("refresh_token"); got != 2 {
		t.Errorf("refreshes = %d, want 2", got)
	}

	s.mu.Lock()
	s.metaIssuer = "/other"
	s.mu.Unlock()
	// Two hours later again, that token has expired too.
	if _, err := fresh(4 * time.Hour).Refresh(ctx); !errors.Is(err, ErrIssuerMismatch) {
		t.Errorf("Refresh after the issuer changed: err = %v, want ErrIssuerMismatch", err)
	}
	if got := s.count("refresh_token"); got != 2 {
		t.Errorf("refreshes = %d, want 2 (none at the changed issuer)", got)
	}
}
