package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// TestSSEFallback: a server that only speaks the deprecated HTTP+SSE
// transport is reached through Dial's fallback.
func TestSSEFallback(t *testing.T) {
	srv := testserver.New(testserver.Options{Era: testserver.LegacyOnly})
	ts := httptest.NewServer(srv.SSEHandler())
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	ctx := testCtx(t)
	c, err := client.Dial(ctx, ts.URL)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if c.Negotiated().Era != negotiation.EraLegacy || c.Negotiated().Transport != transport.KindSSE {
		t.Errorf("Era, TransportKind = %v, %q; want legacy over sse", c.Negotiated().Era, c.Negotiated().Transport)
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "via sse"})
	if err != nil || res.Text() != "via sse" {
		t.Errorf("CallTool over SSE = %+v, %v", res, err)
	}

	// Modern-only clients get no fallback.
	if _, err := client.Dial(ctx, ts.URL, client.WithProtocol(client.Modern)); err == nil {
		t.Error("modern-only Dial of an HTTP+SSE server succeeded")
	}
}

func TestAuthTokens(t *testing.T) {
	for _, tr := range []string{tHTTP, tWS} {
		t.Run(tr, func(t *testing.T) {
			tokens := transport.TokenSourceFunc(func(context.Context) (string, error) { return "s3cret", nil })
			f := connect(t, tr, testserver.Options{}, client.WithAuth(client.Auth{Tokens: tokens}),
				client.WithHeaders(http.Header{"X-Extra": {"yes"}}))
			if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
				t.Fatal(err)
			}
			recs := f.srv.Received()
			if len(recs) == 0 {
				t.Fatal("nothing received")
			}
			if tr == tWS {
				// WebSocket carries the headers on the handshake only; the
				// server records them with every message of the connection.
				recs = recs[:1]
			}
			for _, r := range recs {
				if got := r.Headers.Get("Authorization"); got != "Bearer s3cret" {
					t.Errorf("%s Authorization = %q, want the bearer token", r.Method, got)
				}
				if got := r.Headers.Get("X-Extra"); got != "yes" {
					t.Errorf("%s X-Extra = %q", r.Method, got)
				}
			}
		})
	}
}

func TestAuthRequired(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	// Every request without the right token is answered 401.
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		srv.Handler().ServeHTTP(w, r)
	})
	ts := httptest.NewServer(guard)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
	})
	ctx := testCtx(t)
	_, err := client.Dial(ctx, ts.URL)
	var are *engine.AuthRequiredError
	if !errors.As(err, &are) {
		t.Fatalf("Dial without credentials = %v, want *engine.AuthRequiredError", err)
	}

	// An Authorize hook that obtains the token makes the retry succeed.
	var token string
	tokens := transport.TokenSourceFunc(func(context.Context) (string, error) { return token, nil })
	authorized := 0
	c, err := client.Dial(ctx, ts.URL, client.WithAuth(client.Auth{
		Tokens: tokens,
		Authorize: func(ctx context.Context, challenge *transport.HTTPError) error {
			authorized++
			if !strings.Contains(challenge.WWWAuthenticate, "resource_metadata") {
				t.Errorf("challenge = %q", challenge.WWWAuthenticate)
			}
			token = "good"
			return nil
		},
	}))
	if err != nil {
		t.Fatalf("Dial with Authorize = %v", err)
	}
	defer c.Close()
	if authorized != 1 {
		t.Errorf("Authorize called %d times, want 1", authorized)
	}
}

// hookedTokens is a token source with the optional Header and Authorize
// methods of an *auth.Client: the client uses them and never asks Token.
type hookedTokens struct {
	mu         sync.Mutex
	token      string
	authorized int
	asked      int // Token calls
}

func (h *hookedTokens) Token(context.Context) (string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked++
	return "from-token", nil
}

func (h *hookedTokens) Header(_ context.Context, req *http.Request) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.token != "" {
		req.Header.Set("Authorization", "Custom "+h.token)
	}
	return nil
}

func (h *hookedTokens) Authorize(context.Context, *transport.HTTPError) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.authorized++
	h.token = "good"
	return nil
}

// TestAuthTokensHooks: Auth{Tokens: x}, x having Header and Authorize
// methods (as an *auth.Client has), sets credentials with x.Header, not
// x.Token, and answers a 401 with x.Authorize, over HTTP and WebSocket.
func TestAuthTokensHooks(t *testing.T) {
	for _, tr := range []string{tHTTP, tWS} {
		t.Run(tr, func(t *testing.T) {
			srv := testserver.New(testserver.Options{})
			h := srv.Handler()
			if tr == tWS {
				h = srv.WebSocketHandler()
			}
			guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Custom good" {
					w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"`)
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				h.ServeHTTP(w, r)
			})
			ts := httptest.NewServer(guard)
			t.Cleanup(func() {
				srv.Close()
				ts.Close()
			})
			url := ts.URL
			hooks := &hookedTokens{}
			if tr == tWS {
				url = "ws" + strings.TrimPrefix(url, "http")
				hooks.token = "good" // a WebSocket handshake has no 401 retry
			}
			c, err := client.Dial(testCtx(t), url, client.WithAuth(client.Auth{Tokens: hooks}))
			if err != nil {
				t.Fatalf("Dial = %v", err)
			}
			defer c.Close()
			if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
				t.Fatal(err)
			}
			hooks.mu.Lock()
			defer hooks.mu.Unlock()
			if want := map[string]int{tHTTP: 1, tWS: 0}[tr]; hooks.authorized != want {
				t.Errorf("Authorize called %d times, want %d", hooks.authorized, want)
			}
			if hooks.asked != 0 {
				t.Errorf("Token asked %d times, want never (Header sets the credentials)", hooks.asked)
			}
		})
	}
}

func TestTimeouts(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p))
			ctx := testCtx(t)
			_, err := f.c.CallTool(ctx, "slow", map[string]any{"steps": 1, "delayMs": 60_000}, client.WithTimeout(50*time.Millisecond))
			if !errors.Is(err, engine.ErrRequestTimeout) {
				t.Errorf("CallTool past its timeout = %v, want ErrRequestTimeout", err)
			}
			// The connection still works.
			if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
				t.Errorf("CallTool after a timeout = %v", err)
			}
		})
	}
}

func TestClose(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	if err := f.c.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := f.c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	select {
	case <-f.c.Done():
	default:
		t.Error("Done not closed after Close")
	}
	if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); !errors.Is(err, client.ErrClosed) {
		t.Errorf("CallTool after Close = %v, want ErrClosed", err)
	}
	if err := f.c.Ping(testCtx(t)); !errors.Is(err, client.ErrClosed) {
		t.Errorf("Ping after Close = %v, want ErrClosed", err)
	}
}
