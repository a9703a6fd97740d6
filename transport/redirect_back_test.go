package transport_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// TestStreamableHTTPRedirectBackStaysStripped: with CrossOriginRedirects
// a POST that another origin sends back to the first one (A → B → A, at
// a path B chose) arrives there as it reached B: without its body and
// without credentials or custom headers, which are dropped on the hop to
// another origin "and every later one". Otherwise that origin could
// have the client send its credentials, and the request, to any path of
// the first.
func TestStreamableHTTPRedirectBackStaysStripped(t *testing.T) {
	var back headerLog
	var mu sync.Mutex
	var bodies []int
	var a *httptest.Server
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, a.URL+"/chosen-by-b", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(b.Close)
	a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/chosen-by-b" {
			back.add(r.Header)
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			bodies = append(bodies, len(body))
			mu.Unlock()
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, b.URL+"/mcp", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(a.Close)
	h, ts, hook := credentials()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		tr := &transport.StreamableHTTP{URL: a.URL + "/mcp", Header: h, TokenSource: ts, HeaderFunc: hook, DisableGETStream: true, CrossOriginRedirects: true}
		c := connect(t, tr)
		c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
		_ = c.Write(t.Context(), request(t, 1, "tools/list", map[string]any{}))
		c.Close()
	}
	checkNoCredentials(t, "the first origin, sent back by another", &back, true)
	for _, hs := range back.all() {
		if hs.Get("X-Trace") != "" {
			t.Errorf("the first origin, sent back by another, saw a custom header: %v", hs)
		}
	}
	for i, n := range bodies {
		if n != 0 {
			t.Errorf("request %d, sent back by another origin, arrived with a body of %d bytes", i, n)
		}
	}
}
