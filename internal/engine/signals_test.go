package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestOnInputRound: CallOptions.OnInputRound is called once per MRTR
// round, numbered from 1, before that round's retry is sent: for rounds
// with input requests (elicitation) and for requestState-only rounds
// alike; never for a call answered at once, nor for a round that failed
// before its retry.
func TestOnInputRound(t *testing.T) {
	elicitRound := `{"resultType":"input_required","requestState":"s","inputRequests":{
		"e":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{}}}}}}`
	stateRound := `{"resultType":"input_required","requestState":"only-state"}`
	complete := `{"resultType":"complete","content":[]}`
	tests := []struct {
		name    string
		results []string // the server's answer to each tools/call, in order
		hs      handlerSet
		want    []int
		wantErr bool
	}{
		{name: "no-rounds", results: []string{complete}, hs: allHandlers},
		{name: "elicitation-rounds", results: []string{elicitRound, elicitRound, complete}, hs: allHandlers, want: []int{1, 2}},
		{name: "request-state-only", results: []string{stateRound, complete}, hs: allHandlers, want: []int{1}},
		{name: "mixed", results: []string{elicitRound, stateRound, complete}, hs: allHandlers, want: []int{1, 2}},
		{name: "handler-fails", results: []string{elicitRound, complete}, wantErr: true,
			hs: handlerSet{elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return nil, errors.New("no user here")
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(mrtrServer(func(i int, p *peer, r *jsonrpc.Request) any {
					return json.RawMessage(tt.results[min(i, len(tt.results)-1)])
				}))
				s, err := connect(t, tr, Config{Handler: handler.Detect(tt.hs.build())})
				if err != nil {
					t.Fatal(err)
				}
				var got []int
				opts := &CallOptions{OnInputRound: func(round int) {
					got = append(got, round)
					// Called before the retry: the server has seen
					// exactly the requests of the rounds so far.
					if n := len(tr.peer(0).requests(protocol.MethodToolsCall)); n != round {
						t.Errorf("OnInputRound(%d) after %d tools/call requests, want %d", round, n, round)
					}
				}}
				_, err = s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts)
				if (err != nil) != tt.wantErr {
					t.Fatalf("Call error = %v, want error %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("rounds reported (-want +got):\n%s", diff)
				}
			})
		})
	}
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
	s, _, err := httpConnect(t, h, Config{Mode: ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
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

// TestReconnectedScripted: every kind of re-negotiation closes the channel
// (legacy and modern respawns); a session that fails to heal does not
// close it but ends (Done).
func TestReconnectedScripted(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		servers []func(p *peer, m jsonrpc.Message)
		healed  bool
	}{
		{"legacy-respawn", ModeLegacy, []func(*peer, jsonrpc.Message){dieOn("tools/call", legacyServer), legacyServer}, true},
		{"modern-respawn", ModeAuto, []func(*peer, jsonrpc.Message){dieOn("tools/call", modernServer), modernServer}, true},
		{"modern-came-back-legacy", ModeAuto, []func(*peer, jsonrpc.Message){dieOn("tools/call", modernServer), legacyServer}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(tt.servers...)
				s, err := connect(t, tr, Config{Mode: tt.mode, Replay: ReplayAll})
				if err != nil {
					t.Fatal(err)
				}
				before := checkFresh(t, s)
				_, err = s.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "x"}, nil)
				synctest.Wait()
				if !tt.healed {
					if err == nil || isClosed(before) || !isClosed(s.Done()) {
						t.Errorf("failed heal: Call error %v, Reconnected closed %v, Done closed %v", err, isClosed(before), isClosed(s.Done()))
					}
					return
				}
				if err != nil {
					t.Fatalf("Call: %v", err)
				}
				checkReconnected(t, s, before, 2)
			})
		})
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
			var good, token atomic.Value
			good.Store("old")
			token.Store("old")
			var mu sync.Mutex
			sent := 0
			h := &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) { serveModernHTTP(w, req) }}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				if m, err := jsonrpc.DecodeMessage(body); err == nil {
					if req, ok := m.(*jsonrpc.Request); ok && req.Method == method {
						mu.Lock()
						sent++
						mu.Unlock()
						if r.Header.Get("Authorization") != "Bearer "+good.Load().(string) {
							w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
							w.WriteHeader(http.StatusUnauthorized)
							return
						}
					}
				}
				h.ServeHTTP(w, r)
			}))
			defer srv.Close()
			tr := &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true, HeaderFunc: func(ctx context.Context, r *http.Request) error {
				r.Header.Set("Authorization", "Bearer "+token.Load().(string))
				return nil
			}}
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
			s, err := Connect(t.Context(), tr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			good.Store("new") // the token expires
			err = s.Notify(t.Context(), method, nil)
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
			mu.Lock()
			defer mu.Unlock()
			if sent != tt.wantSent {
				t.Errorf("server received the notification %d times, want %d", sent, tt.wantSent)
			}
		})
	}
}
