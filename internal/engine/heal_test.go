package engine

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// dieOn wraps a server so that the process "exits" when it receives method.
func dieOn(method string, next func(p *peer, m jsonrpc.Message)) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == method {
			p.kill()
			return
		}
		next(p, m)
	}
}

// TestProcessDeathHeals: the server process dies with a request in flight;
// the session respawns it, re-negotiates in the pinned era and re-sends
// the request (when the replay policy allows it). Every re-negotiation
// closes the Reconnected channel and bumps the generation; a session that
// fails to heal does not close it but ends (Done).
func TestProcessDeathHeals(t *testing.T) {
	tests := []struct {
		name     string
		mode     Mode
		servers  []func(p *peer, m jsonrpc.Message)
		opts     *CallOptions
		cfg      Config
		wantErr  error
		second   []string // methods on the respawned connection
		wantEra  negotiation.Era
		wantDone bool
		wantGen  uint64 // Generation() after the heal; zero means 2 (one heal)
	}{
		{name: "legacy-replay", mode: ModeLegacy, cfg: Config{Replay: ReplayAll},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			second:  []string{"initialize", "notifications/initialized", "tools/call"}, wantEra: negotiation.EraLegacy},
		{name: "modern-replay", cfg: Config{Replay: ReplayAll},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", modernServer), modernServer},
			second:  []string{"server/discover", "tools/call"}, wantEra: negotiation.EraModern},
		// The default policy does not run a tool twice: the caller learns
		// that the outcome is unknown, and the connection heals.
		{name: "legacy-safe-default-refuses", mode: ModeLegacy,
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			wantErr: ErrOutcomeUnknown,
			second:  []string{"initialize", "notifications/initialized"}, wantEra: negotiation.EraLegacy},
		{name: "modern-safe-default-refuses",
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", modernServer), modernServer},
			wantErr: ErrOutcomeUnknown,
			second:  []string{"server/discover"}, wantEra: negotiation.EraModern},
		{name: "idempotent-replayed", mode: ModeLegacy, opts: &CallOptions{Idempotent: true},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			second:  []string{"initialize", "notifications/initialized", "tools/call"}, wantEra: negotiation.EraLegacy},
		{name: "per-call-all-replayed", mode: ModeLegacy, opts: &CallOptions{Replay: ReplayAll},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			second:  []string{"initialize", "notifications/initialized", "tools/call"}, wantEra: negotiation.EraLegacy},
		{name: "no-replay", mode: ModeLegacy, cfg: Config{Replay: ReplayAll}, opts: &CallOptions{Replay: ReplayNone, Idempotent: true},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			wantErr: ErrConnectionLost,
			second:  []string{"initialize", "notifications/initialized"}, wantEra: negotiation.EraLegacy},
		{name: "replay-policy-says-no", mode: ModeLegacy, cfg: Config{Replay: ReplayNone}, opts: &CallOptions{Idempotent: true},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer},
			wantErr: ErrConnectionLost,
			second:  []string{"initialize", "notifications/initialized"}, wantEra: negotiation.EraLegacy},
		{name: "modern-server-came-back-legacy",
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", modernServer), legacyServer},
			wantErr: ErrConnectionLost, second: []string{"server/discover"}, wantEra: negotiation.EraModern, wantDone: true},
		{name: "replayed-once-only", mode: ModeLegacy, cfg: Config{Replay: ReplayAll},
			servers: []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer)},
			wantErr: ErrConnectionLost,
			second:  []string{"initialize", "notifications/initialized", "tools/call"}, wantEra: negotiation.EraLegacy, wantGen: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(tt.servers...)
				cfg := tt.cfg
				cfg.Mode = tt.mode
				s := connected(t, tr, cfg)
				before := checkFresh(t, s)
				_, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, tt.opts)
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
				}
				synctest.Wait()
				if tt.wantDone {
					if isClosed(before) {
						t.Error("Reconnected channel closed by a failed heal")
					}
				} else if tt.wantGen == 0 {
					checkReconnected(t, s, before, 2)
				} else {
					checkReconnected(t, s, before, tt.wantGen)
				}
				if tr.connects() < 2 {
					t.Fatalf("connects = %d, want a respawn", tr.connects())
				}
				if diff := cmp.Diff(tt.second, tr.peer(1).methods()); diff != "" {
					t.Errorf("methods on the respawned connection (-want +got):\n%s", diff)
				}
				if s.Era() != tt.wantEra {
					t.Errorf("era = %v, want %v", s.Era(), tt.wantEra)
				}
				select {
				case <-s.Done():
					if !tt.wantDone {
						t.Errorf("session ended: %v", s.Err())
					}
					if _, ok := errors.AsType[*negotiation.Error](s.Err()); !ok {
						t.Errorf("Err() = %v, want the negotiation error", s.Err())
					}
				default:
					if tt.wantDone {
						t.Error("session still usable after the server changed era")
					}
				}
				trace := s.Trace()
				found := false
				for _, st := range trace {
					found = found || st.Step == "reconnect"
				}
				if !found && !tt.wantDone {
					t.Errorf("trace has no reconnect step: %+v", trace)
				}
			})
		})
	}
}

// garbageConn is a connection that turns to garbage once a tools/call is
// written on it: from the message after that on it reads only malformed
// messages (each one alone is not fatal).
type garbageConn struct {
	transport.Conn
	garbage *atomic.Bool
}

func (c garbageConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if r, ok := m.(*jsonrpc.Request); ok && r.Method == "tools/call" {
		c.garbage.Store(true)
	}
	return c.Conn.Write(ctx, m)
}

func (c garbageConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if c.garbage.Load() {
		return nil, &jsonrpc.DecodeError{Reason: "garbage"}
	}
	m, err := c.Conn.Read(ctx)
	if err == nil && c.garbage.Load() {
		return nil, &jsonrpc.DecodeError{Reason: "garbage"}
	}
	return m, err
}

// garbageFirst wraps a transport: its first connection turns to garbage
// at the first tools/call.
type garbageFirst struct {
	*scripted
	garbage atomic.Bool
	n       atomic.Int32
}

func (g *garbageFirst) Connect(ctx context.Context) (transport.Conn, error) {
	conn, err := g.scripted.Connect(ctx)
	if err != nil || g.n.Add(1) > 1 {
		return conn, err
	}
	return garbageConn{conn, &g.garbage}, nil
}

// TestTooManyBadReadsHeals is the regression test for a reader that gave
// up after maxBadReads malformed messages in a row: its error used to be
// read as one more malformed message, so the connection was never declared
// lost and calls on it hung. Now the session reconnects and the call is
// replayed on the new connection.
func TestTooManyBadReadsHeals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := &garbageFirst{scripted: newScripted(legacyServer)}
		s := connected(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll})
		if _, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, nil); err != nil {
			t.Fatalf("Call after the connection turned to garbage = %v, want a healed call", err)
		}
		if got := tr.connects(); got != 2 {
			t.Errorf("connects = %d, want 2 (one reconnection)", got)
		}
	})
}

// isClosed reports whether ch is closed, without waiting.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// checkReconnected checks that the channel taken before the re-negotiation
// (before) is closed, that the generation is want, and that the new
// channel is open.
func checkReconnected(t *testing.T, s *Session, before <-chan struct{}, want uint64) {
	t.Helper()
	if !isClosed(before) {
		t.Error("Reconnected channel not closed after the re-negotiation")
	}
	if g := s.Generation(); g != want {
		t.Errorf("Generation() = %d, want %d", g, want)
	}
	if isClosed(s.Reconnected()) {
		t.Error("the next Reconnected channel is already closed")
	}
}

// checkFresh checks a session that has not re-negotiated since Connect.
func checkFresh(t *testing.T, s *Session) <-chan struct{} {
	t.Helper()
	ch := s.Reconnected()
	if isClosed(ch) {
		t.Error("Reconnected channel closed right after Connect")
	}
	if g := s.Generation(); g != 1 {
		t.Errorf("Generation() after Connect = %d, want 1", g)
	}
	return ch
}

// TestReconnectedLegacyHTTPSessionExpiry: a legacy HTTP session answered
// 404 is initialized again, which closes the Reconnected channel and bumps
// the generation by the time the replayed request returns.
func TestReconnectedLegacyHTTPSessionExpiry(t *testing.T) {
	var expired atomic.Bool
	h := &httpScript{}
	h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if req.Method == protocol.MethodResourcesSubscribe && !expired.Swap(true) {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		serveLegacyHTTP(w, req)
	}
	s := httpSession(t, h, Config{Mode: ModeLegacy})
	before := checkFresh(t, s)
	if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
		t.Fatal(err)
	}
	if isClosed(before) || s.Generation() != 1 {
		t.Fatal("a plain request counted as a re-negotiation")
	}
	if _, err := s.Call(t.Context(), protocol.MethodResourcesSubscribe, map[string]string{"uri": "file:///a"}, nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	checkReconnected(t, s, before, 2)
	want := []string{"initialize", "notifications/initialized", "tools/list", "resources/subscribe", "initialize", "notifications/initialized", "resources/subscribe"}
	if diff := cmp.Diff(want, h.sent()); diff != "" {
		t.Errorf("methods (-want +got):\n%s", diff)
	}
}

// TestReconnectedStdioRespawn: a real stdio server process that dies
// during a call is respawned and initialized again, which closes the
// Reconnected channel; the respawn during the first negotiation (a server
// that exits on server/discover) is part of Connect and does not.
func TestReconnectedStdioRespawn(t *testing.T) {
	t.Run("crash-after-connect", func(t *testing.T) {
		s, err := Connect(t.Context(), stdioServer(t), Config{Mode: ModeLegacy, Replay: ReplayAll})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer s.Close()
		before := checkFresh(t, s)
		if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "crash"}, nil); err != nil {
			t.Fatalf("Call: %v", err)
		}
		checkReconnected(t, s, before, 2)
		if s.Era() != negotiation.EraLegacy {
			t.Errorf("era = %v", s.Era())
		}
	})
	t.Run("respawn-during-connect", func(t *testing.T) {
		s, err := Connect(t.Context(), stdioServer(t), Config{})
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer s.Close()
		checkFresh(t, s)
	})
}
