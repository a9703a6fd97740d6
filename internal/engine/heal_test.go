package engine

import (
	"context"
	"errors"
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
// the request (when the replay policy allows it).
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
			second:  []string{"initialize", "notifications/initialized", "tools/call"}, wantEra: negotiation.EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(tt.servers...)
				cfg := tt.cfg
				cfg.Mode = tt.mode
				s, err := connect(t, tr, cfg)
				if err != nil {
					t.Fatal(err)
				}
				_, err = s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, tt.opts)
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
					t.Fatalf("Call error = %v, want %v", err, tt.wantErr)
				}
				synctest.Wait()
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

var _ = protocol.MethodToolsCall

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
		s, err := connect(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, nil); err != nil {
			t.Fatalf("Call after the connection turned to garbage = %v, want a healed call", err)
		}
		if got := tr.connects(); got != 2 {
			t.Errorf("connects = %d, want 2 (one reconnection)", got)
		}
	})
}
