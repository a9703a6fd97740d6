package engine

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestAuthorizeOnRequest: a 401 or 403 on a request after connecting (an
// expired token, a scope step-up) calls Config.Authorize with the
// challenge and re-sends the request with the new credentials.
func TestAuthorizeOnRequest(t *testing.T) {
	tests := []struct {
		name   string
		status int
		serve  func(w http.ResponseWriter, req *jsonrpc.Request)
		mode   Mode
		era    negotiation.Era
	}{
		{"modern-401-expired", http.StatusUnauthorized, serveModernHTTP, ModeAuto, negotiation.EraModern},
		{"modern-403-step-up", http.StatusForbidden, serveModernHTTP, ModeAuto, negotiation.EraModern},
		{"legacy-401-expired", http.StatusUnauthorized, serveLegacyHTTP, ModeLegacy, negotiation.EraLegacy},
		{"legacy-403-step-up", http.StatusForbidden, serveLegacyHTTP, ModeLegacy, negotiation.EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthServer(tt.status, func(m string) bool { return m == protocol.MethodToolsCall }, tt.serve)
			tr, token := authTransport(t, a)
			var challenges []string
			var mu sync.Mutex
			cfg := Config{Mode: tt.mode, Authorize: func(ctx context.Context, he *transport.HTTPError) error {
				mu.Lock()
				challenges = append(challenges, he.WWWAuthenticate)
				mu.Unlock()
				token.Store("new")
				return nil
			}}
			a.good.Store("old")
			s := connected(t, tr, cfg)
			if s.Era() != tt.era {
				t.Fatalf("era = %v, want %v", s.Era(), tt.era)
			}
			// The token expires (or the tool needs a wider scope).
			a.good.Store("rotated")
			if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, nil); err == nil {
				// Authorize sets "new", the server wants "rotated": refused twice.
				t.Fatal("Call succeeded with a token the server refuses")
			} else if _, ok := errors.AsType[*AuthRequiredError](err); !ok {
				t.Fatalf("Call error = %v, want *AuthRequiredError", err)
			}
			mu.Lock()
			if len(challenges) != maxCallAuthAttempts {
				t.Errorf("Authorize called %d times, want %d", len(challenges), maxCallAuthAttempts)
			}
			challenges = nil
			mu.Unlock()
			// Now Authorize obtains what the server wants.
			a.good.Store("new")
			token.Store("old")
			res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, nil)
			if err != nil {
				t.Fatalf("Call after Authorize: %v", err)
			}
			if !strings.Contains(string(res), `"echo"`) {
				t.Errorf("result = %s", res)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(challenges) != 1 || !strings.Contains(challenges[0], "Bearer") {
				t.Errorf("challenges = %q, want one Bearer challenge", challenges)
			}
		})
	}
}

// TestAuthorizeOnInitialize: a 401 on initialize (legacy mode, a pinned
// legacy version, after the probe's legacy verdict) calls Authorize and
// initializes again.
func TestAuthorizeOnInitialize(t *testing.T) {
	serve := func(w http.ResponseWriter, req *jsonrpc.Request) {
		if req.Method == protocol.MethodDiscover {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		serveLegacyHTTP(w, req)
	}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"legacy-mode", Config{Mode: ModeLegacy}, []string{"initialize", "initialize", "notifications/initialized", "tools/list"}},
		{"pinned-legacy", Config{Mode: ModePinned, PinVersion: protocol.Version20250618}, []string{"initialize", "initialize", "notifications/initialized", "tools/list"}},
		{"after-legacy-verdict", Config{}, []string{"server/discover", "initialize", "initialize", "notifications/initialized", "tools/list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodInitialize }, serve)
			a.good.Store("new")
			tr, token := authTransport(t, a)
			calls := 0
			cfg := tt.cfg
			cfg.Authorize = func(ctx context.Context, he *transport.HTTPError) error {
				calls++
				token.Store("new")
				return nil
			}
			s := connected(t, tr, cfg)
			if calls != 1 {
				t.Errorf("Authorize called %d times, want 1", calls)
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Fatal(err)
			}
			checkDiff(t, "methods", tt.want, a.h.sent())
		})
	}
	t.Run("no-hook", func(t *testing.T) {
		a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodInitialize }, serve)
		a.good.Store("new")
		tr, _ := authTransport(t, a)
		_, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy})
		if _, ok := errors.AsType[*AuthRequiredError](err); !ok {
			t.Fatalf("Connect error = %v, want *AuthRequiredError", err)
		}
	})
}

// TestAuthorizeConcurrentCalls: several calls refused at once each call
// Authorize on their own goroutine; the calls are not serialized (every
// Authorize is entered before any returns).
func TestAuthorizeConcurrentCalls(t *testing.T) {
	const n = 4
	a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodToolsCall }, serveModernHTTP)
	tr, token := authTransport(t, a)
	var entered atomic.Int32
	all := make(chan struct{})
	cfg := Config{Authorize: func(ctx context.Context, he *transport.HTTPError) error {
		if entered.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return ctx.Err()
		}
		token.Store("new")
		return nil
	}}
	s := connected(t, tr, cfg)
	a.good.Store("new")
	ctx, cancel := context.WithTimeout(t.Context(), testBound)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "x"}, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
}

// TestNotifyAuthorize: a notification answered HTTP 401 calls
// Config.Authorize and is sent again with the new credentials; without
// Authorize, or when it does not help, Notify returns an
// *AuthRequiredError.
func TestNotifyAuthorize(t *testing.T) {
	const method = protocol.NotificationRootsListChanged
	tests := []struct {
		name      string
		authorize bool
		grant     string // the token Authorize obtains
		wantCalls int
		wantSent  int // notifications the server received
		wantErr   bool
	}{
		{name: "authorize-helps", authorize: true, grant: "new", wantCalls: 1, wantSent: 2},
		{name: "authorize-does-not-help", authorize: true, grant: "still-bad", wantCalls: maxCallAuthAttempts, wantSent: 1 + maxCallAuthAttempts, wantErr: true},
		{name: "no-authorize", wantSent: 1, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == method }, serveModernHTTP)
			tr, token := authTransport(t, a)
			var calls atomic.Int32
			cfg := Config{}
			if tt.authorize {
				cfg.Authorize = func(ctx context.Context, he *transport.HTTPError) error {
					calls.Add(1)
					if he.StatusCode != http.StatusUnauthorized {
						t.Errorf("Authorize got status %d", he.StatusCode)
					}
					token.Store(tt.grant)
					return nil
				}
			}
			s := connected(t, tr, cfg)
			a.good.Store("new") // the token expires
			err := s.Notify(t.Context(), method, nil)
			if tt.wantErr {
				ae, ok := errors.AsType[*AuthRequiredError](err)
				if !ok || ae.Status != http.StatusUnauthorized {
					t.Errorf("Notify error = %v, want *AuthRequiredError 401", err)
				}
			} else if err != nil {
				t.Errorf("Notify: %v", err)
			}
			if got := int(calls.Load()); got != tt.wantCalls {
				t.Errorf("Authorize called %d times, want %d", got, tt.wantCalls)
			}
			sent := 0
			for _, m := range a.h.sent() {
				if m == method {
					sent++
				}
			}
			if sent != tt.wantSent {
				t.Errorf("server received the notification %d times, want %d", sent, tt.wantSent)
			}
		})
	}
}
