package engine

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// TestFallbackFailureNamesFirstRequest: when the initialize POST is
// refused with 404 and the HTTP+SSE fallback fails too, the error names
// the POST first (errors.As finds its *transport.HTTPError), and the
// fallback's failure is still in the chain.
func TestFallbackFailureNamesFirstRequest(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.Error(w, "no SSE here", http.StatusGone)
			return
		}
		http.NotFound(w, r)
	}))
	defer ts.Close()
	_, err := Connect(t.Context(), &transport.StreamableHTTP{URL: ts.URL}, Config{
		Mode:     ModeLegacy,
		Fallback: &transport.SSE{URL: ts.URL},
	})
	he, ok := errors.AsType[*transport.HTTPError](err)
	if !ok || he.Method != http.MethodPost || he.StatusCode != http.StatusNotFound {
		t.Fatalf("Connect error = %v; want its first *transport.HTTPError to be the POST's 404, got %+v", err, he)
	}
	if !strings.Contains(err.Error(), "POST") || !strings.Contains(err.Error(), "410") {
		t.Errorf("error text %q should name the POST and the fallback's failure", err)
	}
	if _, ok := errors.AsType[*NegotiationError](err); !ok {
		t.Errorf("error %T is not a *NegotiationError", err)
	}
}
