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
// an initialized was answered ("initialized → Accepted"); an answer to a
// request the client gave up on first is not recorded, since when the
// server notices that is up to net/http.
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
		if r.Context().Err() != nil {
			return // the client is gone: nobody reads this answer
		}
		g.record(req.Method + " → " + http.StatusText(status))
		w.WriteHeader(status)
	case protocol.MethodInitialize:
		w.Header().Set(protocol.HeaderSessionID, "sess-init")
		writeResult(w, req, initResult(protocol.LatestLegacyVersion))
	default:
		writeResult(w, req, map[string]any{})
	}
}

// initURL serves g for the test's life and returns its URL.
func initURL(t *testing.T, g *initServer) string {
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	return srv.URL
}

// callAfterResend calls tools/list on s and checks that the server g saw
// initialized answered first, then sent again and accepted before it.
func callAfterResend(t *testing.T, s *Session, g *initServer, firstAnswer string) {
	t.Helper()
	if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := []string{"initialize", "notifications/initialized", "notifications/initialized → " + firstAnswer,
		"notifications/initialized", "notifications/initialized → Accepted", "tools/list"}
	if log := g.requests(); !slices.Equal(log, want) {
		t.Errorf("requests = %q, want %q", log, want)
	}
}

func connectInit(t *testing.T, g *initServer) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
	defer cancel()
	s, err := Connect(ctx, &transport.StreamableHTTP{URL: initURL(t, g), DisableGETStream: true}, Config{Mode: ModeLegacy})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestHTTPLegacyInitializedAnswered: Connect returns once the server has
// answered notifications/initialized, so the handshake is over on both
// sides when the session is ready, and the next request follows it
// (2025-11-25 basic/lifecycle).
func TestHTTPLegacyInitializedAnswered(t *testing.T) {
	release := make(chan struct{})
	g := &initServer{answer: func(ctx context.Context, _ int) int {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return http.StatusAccepted
	}}
	url := initURL(t, g)
	type connected struct {
		s   *Session
		err error
	}
	done := make(chan connected, 1)
	go func() {
		s, err := Connect(t.Context(), &transport.StreamableHTTP{URL: url, DisableGETStream: true}, Config{Mode: ModeLegacy})
		done <- connected{s, err}
	}()
	want := []string{"initialize", "notifications/initialized"}
	if log := g.waitRequests(len(want)); !slices.Equal(log, want) {
		t.Fatalf("requests = %q, want %q", log, want)
	}
	select {
	case <-done:
		t.Fatal("Connect returned before the server answered notifications/initialized")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	var c connected
	select {
	case c = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Connect did not return once initialized was answered")
	}
	if c.err != nil {
		t.Fatalf("Connect: %v", c.err)
	}
	defer c.s.Close()
	if _, err := c.s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want = []string{"initialize", "notifications/initialized", "notifications/initialized → Accepted", "tools/list"}
	if log := g.requests(); !slices.Equal(log, want) {
		t.Errorf("requests = %q, want %q", log, want)
	}
}

// TestHTTPLegacyInitializedUnanswered: a server that never answers
// notifications/initialized holds Connect only as long as Connect's
// context allows (it fails with the context's error, and Close does not
// wait), or the response-header timeout: then the session is ready, and
// the next request sends initialized again first and goes out once it was
// accepted.
func TestHTTPLegacyInitializedUnanswered(t *testing.T) {
	t.Run("context", func(t *testing.T) {
		g := &initServer{answer: func(ctx context.Context, _ int) int {
			<-ctx.Done()
			return http.StatusAccepted
		}}
		url := initURL(t, g)
		ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
		defer cancel()
		start := time.Now()
		s, err := Connect(ctx, &transport.StreamableHTTP{URL: url, DisableGETStream: true}, Config{Mode: ModeLegacy})
		if err == nil {
			s.Close()
			t.Fatal("Connect succeeded with notifications/initialized unanswered and its context ended")
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Connect: %v, want the context's deadline", err)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("Connect took %v with a 300ms context", d)
		}
	})
	t.Run("header-timeout", func(t *testing.T) {
		g := &initServer{answer: func(ctx context.Context, n int) int {
			if n == 0 {
				<-ctx.Done() // the first one is never answered
			}
			return http.StatusAccepted
		}}
		tr := &transport.StreamableHTTP{URL: initURL(t, g), DisableGETStream: true, ResponseHeaderTimeout: 200 * time.Millisecond}
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer s.Close()
		if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
			t.Fatalf("tools/list: %v", err)
		}
		// The first initialized is never answered; the second is, and
		// tools/list follows it.
		want := []string{"initialize", "notifications/initialized",
			"notifications/initialized", "notifications/initialized → Accepted", "tools/list"}
		if log := g.requests(); !slices.Equal(log, want) {
			t.Errorf("requests = %q, want %q", log, want)
		}
	})
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
		callAfterResend(t, s, g, "Service Unavailable")
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
