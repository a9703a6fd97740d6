package client_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// TestDialRedirectSameOriginOnly: Dial follows no redirect to another
// origin by default, on Streamable HTTP in both eras, on the HTTP+SSE
// fallback and on the WebSocket handshake: it fails with a
// *transport.RedirectError naming both origins, and the other origin sees
// no request. With WithCrossOriginRedirects the WebSocket handshake is
// followed there without the credentials WithAuth and WithHeaders add.
func TestDialRedirectSameOriginOnly(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	var seen []http.Header
	var mu sync.Mutex
	record := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			seen = append(seen, r.Header.Clone())
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", record(srv.Handler()))
	mux.Handle("/ws", record(srv.WebSocketHandler()))
	other := httptest.NewServer(mux)
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	t.Cleanup(func() {
		home.Close()
		other.Close()
		srv.Close()
	})
	tokens := transport.TokenSourceFunc(func(context.Context) (string, error) { return "s3cret", nil })
	creds := []client.Option{client.WithAuth(client.Auth{Tokens: tokens}), client.WithHeaders(http.Header{"X-Api-Key": {"k3y"}})}
	ws := "ws" + strings.TrimPrefix(home.URL, "http")
	for _, tc := range []struct {
		url string
		p   client.Protocol
	}{{home.URL + "/mcp", client.Auto}, {home.URL + "/mcp", client.Modern}, {home.URL + "/mcp", client.Legacy}, {ws + "/ws", client.Auto}} {
		c, err := client.Dial(testCtx(t), tc.url, append(creds, client.WithProtocol(tc.p))...)
		if err == nil {
			c.Close()
			t.Fatalf("Dial(%s, %v) followed a redirect to another origin", tc.url, tc.p)
		}
		re, ok := errors.AsType[*transport.RedirectError](err)
		if !ok || re.From != home.URL || re.To != other.URL || !errors.Is(err, transport.ErrCrossOriginRedirect) {
			t.Errorf("Dial(%s, %v) = %v; want a RedirectError from %s to %s", tc.url, tc.p, err, home.URL, other.URL)
		}
	}
	mu.Lock()
	n := len(seen)
	mu.Unlock()
	if n != 0 {
		t.Fatalf("the other origin saw %d requests; want none", n)
	}

	c, err := client.Dial(testCtx(t), ws+"/ws", append(creds, client.WithCrossOriginRedirects())...)
	if err != nil {
		t.Fatalf("Dial with WithCrossOriginRedirects: %v", err)
	}
	if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
		t.Error(err)
	}
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the other origin saw no handshake")
	}
	for _, h := range seen {
		if h.Get("Authorization") != "" || h.Get("X-Api-Key") != "" {
			t.Errorf("the other origin saw credentials: %v", h)
		}
	}
}
