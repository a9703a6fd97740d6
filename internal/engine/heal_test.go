package engine

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

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
				checkDiff(t, "methods on the respawned connection", tt.second, tr.peer(1).methods())
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

// TestEventsOffTheLoop: the event hook runs on the dispatcher, never on
// the loop: a hook that blocks does not stop calls, and the events arrive
// in order (era pinned at connect, then replayed for a lost idempotent
// request, then re-initialized and pinned again after the respawn).
func TestEventsOffTheLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		var mu sync.Mutex
		var kinds []EventKind
		tr := newScripted(dieOn("tools/call", legacyServer), legacyServer)
		s := connected(t, tr, Config{Mode: ModeLegacy, OnEvent: func(ev Event) {
			mu.Lock()
			kinds = append(kinds, ev.Kind)
			first := len(kinds) == 1
			mu.Unlock()
			if first {
				<-release // blocks the dispatcher, not the loop
			}
		}})
		done := make(chan error, 1)
		go func() {
			_, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, &CallOptions{Idempotent: true})
			done <- err
		}()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("Call while the hook blocks = %v", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("a blocked event hook stopped calls: it runs on the loop")
		}
		close(release)
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		// The caller's replay and the healer's re-negotiation run
		// concurrently; each side's events keep their order.
		if len(kinds) != 4 || kinds[0] != EventEraPinned {
			t.Fatalf("events %v, want era-pinned first, then replayed, era-pinned, reinitialized", kinds)
		}
		rest := slices.DeleteFunc(slices.Clone(kinds[1:]), func(k EventKind) bool { return k == EventReplayed })
		if len(rest) != 2 || rest[0] != EventEraPinned || rest[1] != EventReinitialized {
			t.Errorf("events %v, want one replayed and era-pinned before reinitialized", kinds)
		}
	})
}

// TestRestoreSubscriptions: after a legacy re-initialization (the server
// process died and was respawned) the engine re-sends the tracked
// resources/subscribe calls — each URI once, untracked ones not — and then
// signals OnRestored on the dispatcher.
func TestRestoreSubscriptions(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(dieOn("tools/call", legacyServer), legacyServer)
		restored := make(chan struct{}, 4)
		s := connected(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll, OnRestored: func(context.Context) { restored <- struct{}{} }})
		const kept, dropped = "file:///kept.txt", "file:///dropped.txt"
		for _, u := range []string{kept, kept, dropped} {
			s.TrackSubscription(u, true)
		}
		s.TrackSubscription(kept, false) // still one subscriber
		s.TrackSubscription(dropped, false)
		if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "echo"}, nil); err != nil {
			t.Fatalf("call across the respawn: %v", err)
		}
		synctest.Wait()
		select {
		case <-restored:
		default:
			t.Fatal("OnRestored was not called after the re-initialization")
		}
		subs := tr.peer(1).requests(protocol.MethodResourcesSubscribe)
		var uris []string
		for _, r := range subs {
			uris = append(uris, string(r.Params))
		}
		if len(uris) != 1 || !strings.Contains(uris[0], kept) {
			t.Errorf("re-subscribed %v, want %s once", uris, kept)
		}
		if m := tr.peer(1).methods(); !slices.Contains(m, protocol.MethodInitialize) {
			t.Errorf("respawned server saw %v, want a new initialize", m)
		}
		if len(restored) != 0 {
			t.Error("OnRestored called more than once")
		}
	})
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
	checkDiff(t, "methods", want, h.sent())
}

// TestReconnectedStdioRespawn: a real stdio server process that dies
// during a call is respawned and initialized again, which closes the
// Reconnected channel; the respawn during the first negotiation (a server
// that exits on server/discover) is part of Connect and does not.
func TestReconnectedStdioRespawn(t *testing.T) {
	t.Run("crash-after-connect", func(t *testing.T) {
		s := connected(t, stdioServer(t), Config{Mode: ModeLegacy, Replay: ReplayAll})
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
		s := connected(t, stdioServer(t), Config{})
		checkFresh(t, s)
	})
}

// TestConnectionLostSaysWhetherSent: the error of a request lost with its
// connection says whether it was written, so that its reader knows whether
// the server may have got it.
func TestConnectionLostSaysWhetherSent(t *testing.T) {
	for _, tt := range []struct {
		err  *ConnectionLostError
		want string
	}{
		{&ConnectionLostError{Method: "tools/call", Err: transport.ErrClosed, Unsent: true},
			"connection lost before the request was sent: " + transport.ErrClosed.Error()},
		{&ConnectionLostError{Method: "tools/call", Err: transport.ErrStreamBroken},
			"connection lost: " + transport.ErrStreamBroken.Error()},
		{&ConnectionLostError{Err: transport.ErrStreamBroken}, "connection lost: " + transport.ErrStreamBroken.Error()},
	} {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// TestClosingNeverHeals: once Close has begun (the session's life context
// ended), a read that fails because of it is no loss: the session neither
// heals nor re-negotiates (no second connection, no second
// server/discover reaches the server), and the calls in flight fail with
// ErrClosed, not as lost. Close ends the loop and cancels the life context
// together; the reader's error must not win the loop's select.
func TestClosingNeverHeals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		server func(p *peer, m jsonrpc.Message)
		mode   Mode
		state  State
		sent   []string // what the server saw at connect
	}{
		{"modern", modernServer, ModeModern, StateModern, []string{"server/discover"}},
		{"legacy", legacyServer, ModeLegacy, StateLegacy, []string{"initialize", "notifications/initialized"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(tc.server)
				s := connected(t, tr, Config{Mode: tc.mode})
				synctest.Wait()
				s.lifeCancel() // Close's first steps, without the loop's end
				synctest.Wait()
				if n := tr.connects(); n != 1 {
					t.Errorf("connections after the life context ended = %d, want 1 (no heal)", n)
				}
				if got := tr.peer(0).methods(); !slices.Equal(got, tc.sent) {
					t.Errorf("the server saw %v, want only the connect's %v", got, tc.sent)
				}
				if st := s.State(); st != tc.state {
					t.Errorf("state after the life context ended = %v, want %v", st, tc.state)
				}
				s.Close()
			})
		})
	}
}

// TestRestoreDoesNotResetHeals: a legacy server that dies right after
// answering each resources/subscribe is not respawned for ever: the
// engine's own re-subscription after a re-initialization is no evidence
// that the server came back to health, so the heals stay consecutive and
// the session fails after maxConsecutiveHeals of them (before, each
// restored subscription reset the count and the process was respawned
// without end).
func TestRestoreDoesNotResetHeals(t *testing.T) {
	tr := newScripted(func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.MethodResourcesSubscribe {
			p.reply(r, map[string]any{})
			p.kill()
			return
		}
		legacyServer(p, m)
	})
	s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		s.Close()
		tr.wait()
	}()
	const uri = "file:///a"
	s.TrackSubscription(uri, true)
	if _, err := s.Call(t.Context(), protocol.MethodResourcesSubscribe, &protocol.SubscribeParams{URI: uri}, nil); err != nil {
		t.Fatal(err)
	}
	bound := time.After(testBound)
	for tr.connects() <= 10*maxConsecutiveHeals {
		select {
		case <-s.Done():
			if n := tr.connects(); n > maxConsecutiveHeals+1 {
				t.Errorf("%d connections, want at most %d", n, maxConsecutiveHeals+1)
			}
			return
		case <-bound:
			t.Fatalf("session neither failed nor kept reconnecting (%d connections)", tr.connects())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%d connections and the session still heals: the restored subscriptions reset the heal count", tr.connects())
}

// TestNotifyWaitsForHeal: a notification sent while a legacy HTTP session
// that expired (404) is initialized again waits for the new session's
// handshake: the server sees it after notifications/initialized, with the
// new session's id, not on the new connection before initialize was
// answered (where a legacy server refuses it, or takes it for a session
// it does not know).
func TestNotifyWaitsForHeal(t *testing.T) {
	var expired atomic.Bool
	reinit := make(chan struct{})
	noted := make(chan struct{}, 1)
	var sids record[string]
	h := &httpScript{}
	h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch {
		case req.Method == protocol.MethodResourcesSubscribe && !expired.Swap(true):
			w.WriteHeader(http.StatusNotFound)
			return
		case req.Method == protocol.MethodInitialize && expired.Load():
			close(reinit)
			// Hold the handshake until the notification came, or long
			// enough for it to have been sent.
			select {
			case <-noted:
			case <-time.After(time.Second):
			}
		}
		serveLegacyHTTP(w, req)
	}
	mux := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r)
	})
	note := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && expired.Load() {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if m, err := jsonrpc.DecodeMessage(body); err == nil {
				if n, ok := m.(*jsonrpc.Request); ok && n.Method == protocol.NotificationRootsListChanged {
					sids.add(r.Header.Get(protocol.HeaderSessionID))
					select {
					case noted <- struct{}{}:
					default:
					}
				}
			}
		}
		mux.ServeHTTP(w, r)
	})
	s := httpSession(t, note, Config{Mode: ModeLegacy})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	callErr := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, protocol.MethodResourcesSubscribe, map[string]string{"uri": "file:///a"}, nil)
		callErr <- err
	}()
	select {
	case <-reinit:
	case <-ctx.Done():
		t.Fatal("the session was not initialized again")
	}
	if err := s.Notify(ctx, protocol.NotificationRootsListChanged, nil); err != nil {
		t.Fatalf("Notify during the heal: %v", err)
	}
	if err := <-callErr; err != nil {
		t.Fatalf("Call: %v", err)
	}
	// The notification comes after the second notifications/initialized.
	got := h.sent()
	i := slices.Index(got, protocol.NotificationRootsListChanged)
	handshakes := 0
	for _, m := range got[:max(i, 0)] {
		if m == protocol.NotificationInitialized {
			handshakes++
		}
	}
	if handshakes != 2 {
		t.Errorf("methods = %q, want %s after the new session's handshake", got, protocol.NotificationRootsListChanged)
	}
	if ids := sids.all(); len(ids) != 1 || ids[0] != "sess-1" {
		t.Errorf("the notification's session ids = %q, want [sess-1]", ids)
	}
}
