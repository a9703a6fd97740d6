package engine

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// initServer is a legacy Streamable HTTP server (no GET stream) whose
// answer to notifications/initialized the test controls: answer is called
// for each one (with how many came before) and returns the status. It
// records, in order, every POST's arrival ("tools/list") and the moment
// an initialized was answered ("initialized → 202").
type initServer struct {
	answer func(ctx context.Context, n int) int

	reqLog
	inits atomic.Int64 // initialized notifications so far
}

func (g *initServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m, ok := decodePOST(w, r)
	if !ok {
		return
	}
	req := m.(*jsonrpc.Request)
	g.record(req.Method)
	switch req.Method {
	case protocol.NotificationInitialized:
		status := g.answer(r.Context(), int(g.inits.Add(1)-1))
		g.record(req.Method + " → " + http.StatusText(status))
		w.WriteHeader(status)
	case protocol.MethodInitialize:
		w.Header().Set(protocol.HeaderSessionID, "sess-init")
		writeResult(w, req, initResult(protocol.LatestLegacyVersion))
	default:
		writeResult(w, req, map[string]any{})
	}
}

func connectInit(t *testing.T, g *initServer) *Session {
	t.Helper()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	s, err := Connect(ctx, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}, Config{Mode: ModeLegacy})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestHTTPLegacyInitializedOverlapped: Connect returns without waiting
// for the server's answer to notifications/initialized, and the next
// request reaches the server only after that answer, so that the server
// has handled initialized first (2025-11-25 basic/lifecycle).
func TestHTTPLegacyInitializedOverlapped(t *testing.T) {
	release := make(chan struct{})
	g := &initServer{answer: func(ctx context.Context, _ int) int {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return http.StatusAccepted
	}}
	s := connectInit(t, g)
	// Connect returned; initialized arrives (the server holds its answer).
	want := []string{"initialize", "notifications/initialized"}
	if log := g.waitRequests(len(want)); !slices.Equal(log, want) {
		t.Fatalf("requests after Connect returned = %q, want %q", log, want)
	}
	called := make(chan error, 1)
	go func() {
		_, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
		called <- err
	}()
	time.Sleep(100 * time.Millisecond)
	if log := g.requests(); !slices.Equal(log, want) {
		t.Fatalf("requests while initialized is unanswered = %q, want %q", log, want)
	}
	close(release)
	select {
	case err := <-called:
		if err != nil {
			t.Fatalf("tools/list: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("tools/list did not return")
	}
	want = []string{"initialize", "notifications/initialized", "notifications/initialized → Accepted", "tools/list"}
	if log := g.requests(); !slices.Equal(log, want) {
		t.Errorf("requests = %q, want %q", log, want)
	}
}

// TestHTTPLegacyCloseDoesNotWaitForInitialized: Close right after Connect
// does not wait for the answer to notifications/initialized.
func TestHTTPLegacyCloseDoesNotWaitForInitialized(t *testing.T) {
	g := &initServer{answer: func(ctx context.Context, _ int) int {
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
		return http.StatusAccepted
	}}
	s := connectInit(t, g)
	if log := g.waitRequests(2); !slices.Equal(log, []string{"initialize", "notifications/initialized"}) {
		t.Fatalf("requests = %q, want initialize and initialized", log)
	}
	start := time.Now()
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Close took %v with initialized unanswered", d)
	}
}

// TestHTTPLegacyInitializedSentAgain: when the server refuses
// notifications/initialized, the next request sends it again first, and
// goes out only once it was accepted; while it is refused (the session
// is initialized anew, a bounded number of times), the request fails as
// not sent, with that refusal in its text, and never reaches the server.
func TestHTTPLegacyInitializedSentAgain(t *testing.T) {
	t.Run("accepted the second time", func(t *testing.T) {
		g := &initServer{answer: func(_ context.Context, n int) int {
			if n == 0 {
				return http.StatusServiceUnavailable
			}
			return http.StatusAccepted
		}}
		s := connectInit(t, g)
		if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		want := []string{"initialize", "notifications/initialized", "notifications/initialized → Service Unavailable",
			"notifications/initialized", "notifications/initialized → Accepted", "tools/list"}
		if log := g.requests(); !slices.Equal(log, want) {
			t.Errorf("requests = %q, want %q", log, want)
		}
	})
	t.Run("always refused", func(t *testing.T) {
		g := &initServer{answer: func(context.Context, int) int { return http.StatusBadRequest }}
		s := connectInit(t, g)
		_, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
		if !errors.Is(err, ErrNotSent) || errors.Is(err, ErrOutcomeUnknown) || !strings.Contains(err.Error(), "400 Bad Request") {
			t.Fatalf("tools/list error = %v, want not sent, for the 400 of notifications/initialized", err)
		}
		if slices.Contains(g.requests(), "tools/list") {
			t.Errorf("tools/list reached the server before initialized was accepted: %q", g.requests())
		}
	})
}
