package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// negotiationErr matches a *negotiation.Error of kind k (and, when reason
// is set, of that reason).
func negotiationErr(k negotiation.ErrorKind, reason string) func(error) bool {
	return func(err error) bool {
		e, ok := errors.AsType[*negotiation.Error](err)
		return ok && e.Kind == k && (reason == "" || e.Reason == reason)
	}
}

func TestNegotiationVerdicts(t *testing.T) {
	unsupported := func(versions ...string) map[string]any {
		return map[string]any{"supported": versions, "requested": protocol.Version20260728}
	}
	tests := []struct {
		name    string
		cfg     Config
		kind    string
		netErr  bool
		servers []func(p *peer, m jsonrpc.Message)
		// want
		era       negotiation.Era
		version   string
		methods   [][]string // per connection: methods the client sent
		errAs     func(error) bool
		errString string
	}{
		{
			name:    "auto/modern",
			servers: []func(*peer, jsonrpc.Message){modernServer},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover"}},
		},
		{
			name: "auto/corrective-then-modern",
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				if len(p.requests(protocol.MethodDiscover)) == 1 {
					p.replyErr(r, jsonrpc.CodeUnsupportedProtocolVersion, "bad version", unsupported(protocol.Version20260728))
					return
				}
				modernServer(p, r)
			})},
			era: negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover", "server/discover"}},
		},
		{
			name: "auto/corrective-twice-is-an-error",
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				p.replyErr(r, jsonrpc.CodeUnsupportedProtocolVersion, "bad version", unsupported(protocol.Version20260728, "2099-01-01"))
			})},
			methods: [][]string{{"server/discover", "server/discover"}},
			errAs: func(err error) bool {
				_, ok := errors.AsType[*negotiation.UnsupportedProtocolVersionError](err)
				return ok && errors.Is(err, jsonrpc.ErrUnsupportedProtocolVersion)
			},
		},
		{
			name:    "auto/legacy-method-not-found",
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			era:     negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name:    "auto/legacy-invalid-params",
			servers: []func(*peer, jsonrpc.Message){refusing(protocol.MethodDiscover, jsonrpc.CodeInvalidParams, "expected initialize", legacyServer)},
			era:     negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name: "auto/legacy-timeout",
			kind: transport.KindStdio,
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				if r.Method == protocol.MethodDiscover {
					return // never answers
				}
				legacyServer(p, r)
			})},
			era: negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name: "auto/legacy-version-named-by-32022",
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				if r.Method == protocol.MethodDiscover {
					p.replyErr(r, jsonrpc.CodeUnsupportedProtocolVersion, "bad version", unsupported(protocol.Version20250618))
					return
				}
				legacyServer(p, r)
			})},
			era: negotiation.EraLegacy, version: protocol.Version20250618,
			methods: [][]string{{"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name: "auto/reconnect-after-exit",
			kind: transport.KindStdio,
			servers: []func(*peer, jsonrpc.Message){
				reqHandler(func(p *peer, r *jsonrpc.Request) { p.kill() }),
				legacyServer,
			},
			era: negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover"}, {"initialize", "notifications/initialized"}},
		},
		{
			// Seed 003: a WebSocket is HTTP-like; a dropped connection is
			// the network-error row (retried on a new connection), never
			// the stdio exit row.
			name: "auto/websocket-drop-during-probe-is-retried",
			kind: transport.KindWebSocket, netErr: true,
			servers: []func(*peer, jsonrpc.Message){
				reqHandler(func(p *peer, r *jsonrpc.Request) { p.kill() }),
				legacyServer,
			},
			era: negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover"}, {"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name: "modern/websocket-drop-during-probe",
			cfg:  Config{Mode: ModeModern},
			kind: transport.KindWebSocket, netErr: true,
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) { p.kill() })},
			methods: [][]string{{"server/discover"}, {"server/discover"}, {"server/discover"}, {"server/discover"}, {"server/discover"}},
			errAs:   negotiationErr(negotiation.KindTransport, "retries exhausted (network)"),
		},
		{
			// Seed 003: a probe timeout on WebSocket is retried (typed),
			// never a legacy verdict.
			name:    "auto/websocket-timeout-is-retried",
			kind:    transport.KindWebSocket,
			servers: []func(*peer, jsonrpc.Message){silentFirstProbe(modernServer)},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover", "server/discover"}},
		},
		{
			name:    "auto/memory-timeout-is-retried",
			servers: []func(*peer, jsonrpc.Message){silentFirstProbe(modernServer)},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover", "server/discover"}},
		},
		{
			name: "auto/websocket-timeout-forever-is-a-typed-error",
			kind: transport.KindWebSocket,
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				if r.Method != protocol.MethodDiscover {
					legacyServer(p, r)
				}
			})},
			methods: [][]string{{"server/discover", "server/discover", "server/discover", "server/discover", "server/discover"}},
			errAs:   negotiationErr(negotiation.KindTransport, "retries exhausted (timeout)"),
		},
		{
			// JSON-RPC errors stay legacy evidence on every transport.
			name:    "auto/websocket-method-not-found-is-legacy",
			kind:    transport.KindWebSocket,
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			era:     negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"server/discover", "initialize", "notifications/initialized"}},
		},
		{
			name: "auto/missing-capability-is-an-error",
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				p.replyErr(r, jsonrpc.CodeMissingRequiredClientCapability, "need sampling", map[string]any{"requiredCapabilities": map[string]any{"sampling": map[string]any{}}})
			})},
			methods: [][]string{{"server/discover"}},
			errAs:   negotiationErr(negotiation.KindProtocol, ""),
		},
		{
			name:    "modern/refuses-legacy",
			cfg:     Config{Mode: ModeModern},
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			methods: [][]string{{"server/discover"}},
			errAs:   negotiationErr(negotiation.KindNegotiation, ""),
		},
		{
			name:    "modern/timeout-is-an-error",
			cfg:     Config{Mode: ModeModern},
			kind:    transport.KindStdio,
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {})},
			methods: [][]string{{"server/discover"}},
			errAs:   negotiationErr(negotiation.KindNegotiation, ""),
		},
		{
			name:    "modern/ok",
			cfg:     Config{Mode: ModeModern},
			servers: []func(*peer, jsonrpc.Message){modernServer},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover"}},
		},
		{
			name:    "legacy/initialize-at-once",
			cfg:     Config{Mode: ModeLegacy},
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			era:     negotiation.EraLegacy, version: protocol.Version20251125,
			methods: [][]string{{"initialize", "notifications/initialized"}},
		},
		{
			name:    "pinned/modern",
			cfg:     Config{Mode: ModePinned, PinVersion: protocol.Version20260728},
			servers: []func(*peer, jsonrpc.Message){modernServer},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"server/discover"}},
		},
		{
			name:    "pinned/modern-no-fallback",
			cfg:     Config{Mode: ModePinned, PinVersion: protocol.Version20260728},
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			methods: [][]string{{"server/discover"}},
			errAs:   negotiationErr(negotiation.KindNegotiation, ""),
		},
		{
			name:    "pinned/legacy-exact",
			cfg:     Config{Mode: ModePinned, PinVersion: protocol.Version20250618},
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			era:     negotiation.EraLegacy, version: protocol.Version20250618,
			methods: [][]string{{"initialize", "notifications/initialized"}},
		},
		{
			name: "pinned/legacy-other-answer",
			cfg:  Config{Mode: ModePinned, PinVersion: protocol.Version20250618},
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				p.reply(r, initResult(protocol.Version20251125))
			})},
			methods: [][]string{{"initialize"}},
			errAs:   negotiationErr(negotiation.KindNoCommonVersion, ""),
		},
		{
			name: "legacy/unknown-version-answer",
			cfg:  Config{Mode: ModeLegacy},
			servers: []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
				p.reply(r, initResult(protocol.Version20241105))
			})},
			methods: [][]string{{"initialize"}},
			errAs: func(err error) bool {
				_, ok := errors.AsType[*negotiation.UnsupportedProtocolVersionError](err)
				return ok
			},
		},
		{
			name:    "hint/modern-skips-probe",
			cfg:     Config{EraHint: negotiation.EraModern, VersionHint: protocol.Version20260728},
			servers: []func(*peer, jsonrpc.Message){modernServer},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{nil},
		},
		{
			name:    "hint/legacy-skips-probe",
			cfg:     Config{EraHint: negotiation.EraLegacy, VersionHint: protocol.Version20250618},
			servers: []func(*peer, jsonrpc.Message){legacyServer},
			era:     negotiation.EraLegacy, version: protocol.Version20250618,
			methods: [][]string{{"initialize", "notifications/initialized"}},
		},
		{
			// The engine verifies a hint that fails the negotiation: it
			// probes once, on a new connection.
			name:    "hint/legacy-failed-initialize-probes-afresh",
			cfg:     Config{EraHint: negotiation.EraLegacy},
			servers: []func(*peer, jsonrpc.Message){refusing(protocol.MethodInitialize, jsonrpc.CodeMethodNotFound, "initialize is not supported", modernServer)},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"initialize"}, {"server/discover"}},
		},
		{
			name:    "hint/legacy-wrong-reprobes",
			cfg:     Config{EraHint: negotiation.EraLegacy},
			servers: []func(*peer, jsonrpc.Message){modernServer},
			era:     negotiation.EraModern, version: protocol.Version20260728,
			methods: [][]string{{"initialize", "server/discover"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(tt.servers...)
				tr.kind, tr.netErr = tt.kind, tt.netErr
				s, err := connect(t, tr, tt.cfg)
				if tt.errAs != nil {
					if err == nil {
						t.Fatalf("Connect succeeded (era %v), want an error", s.Era())
					}
					if _, ok := errors.AsType[*NegotiationError](err); !ok {
						t.Errorf("Connect error %T %v is not a *NegotiationError", err, err)
					}
					if !tt.errAs(err) {
						t.Errorf("Connect error = %v (%T), not the expected type", err, errors.Unwrap(err))
					}
				} else {
					if err != nil {
						t.Fatalf("Connect: %v", err)
					}
					if s.Era() != tt.era || s.ProtocolVersion() != tt.version {
						t.Errorf("era, version = %v %q, want %v %q", s.Era(), s.ProtocolVersion(), tt.era, tt.version)
					}
					if len(s.Trace()) == 0 {
						t.Errorf("Trace() is empty")
					}
					checkTraceOwned(t, s)
				}
				synctest.Wait()
				var got [][]string
				for i := 0; i < tr.connects(); i++ {
					got = append(got, tr.peer(i).methods())
				}
				if diff := cmp.Diff(tt.methods, got); diff != "" {
					t.Errorf("methods sent per connection (-want +got):\n%s\ntrace: %+v", diff, traceOf(s, err))
				}
			})
		})
	}
}

// checkTraceOwned fails unless a trace of at most two steps is kept in
// the session's negState itself: one in the array of the driver that
// negotiated would keep the whole driver (its context, channels, closure)
// for as long as the session is connected.
func checkTraceOwned(t *testing.T, s *Session) {
	t.Helper()
	n := s.negState()
	if cap(n.trace) <= len(n.traceBuf) && len(n.trace) > 0 && &n.trace[0] != &n.traceBuf[0] {
		t.Errorf("the negotiated trace (%d steps) is kept outside the session's negState", len(n.trace))
	}
}

func traceOf(s *Session, err error) []TraceStep {
	if s != nil {
		return s.Trace()
	}
	if ne, ok := errors.AsType[*NegotiationError](err); ok {
		return ne.Trace
	}
	return nil
}

func TestNegotiationObservable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(modernServer)
		s := connected(t, tr, Config{ClientInfo: &protocol.Implementation{Name: "test", Version: "9"}})
		if s.Discover() == nil || s.InitializeResult() != nil {
			t.Errorf("Discover, InitializeResult = %v, %v; want set, nil", s.Discover(), s.InitializeResult())
		}
		if got := s.ServerInfo(); got == nil || got.Name != "fake" {
			t.Errorf("ServerInfo() = %+v, want fake", got)
		}
		if s.Instructions() != "be nice" || s.ServerCapabilities().Tools == nil {
			t.Errorf("Instructions, capabilities = %q, %+v", s.Instructions(), s.ServerCapabilities())
		}
		want := []TraceStep{{Step: "probe", Sent: "server/discover 2026-07-28", Outcome: "result", Verdict: "modern"}}
		checkDiff(t, "Trace()", want, s.Trace())
		if s.State() != StateModern || s.TransportKind() != transport.KindMemory {
			t.Errorf("State, TransportKind = %v, %q", s.State(), s.TransportKind())
		}
		// The probe carried the modern _meta.
		probe := tr.peer(0).requests(protocol.MethodDiscover)[0]
		meta := metaOf(t, probe.Params)
		if string(meta[protocol.MetaProtocolVersion]) != `"2026-07-28"` || string(meta[protocol.MetaClientCapabilities]) != `{}` ||
			string(meta[protocol.MetaClientInfo]) != `{"name":"test","version":"9"}` {
			t.Errorf("probe _meta = %s", probe.Params)
		}
	})
}

func TestLegacyObservable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr, s := legacySession(t)
		if s.Discover() != nil || s.InitializeResult() == nil || s.ServerInfo().Name != "legacy-fake" || s.Instructions() != "legacy instructions" {
			t.Errorf("observable = %v %v %v %q", s.Discover(), s.InitializeResult(), s.ServerInfo(), s.Instructions())
		}
		init := tr.peer(0).requests(protocol.MethodInitialize)[0]
		var ip protocol.InitializeParams
		if err := json.Unmarshal(init.Params, &ip); err != nil {
			t.Fatal(err)
		}
		if ip.ProtocolVersion != protocol.Version20251125 || ip.ClientInfo.Name != "conduit" {
			t.Errorf("initialize params = %+v", ip)
		}
	})
}

// TestModernHintWrongReprobes: an era-cache hint said modern, but the
// server is legacy: the first call's -32601 triggers one re-probe, the
// session initializes, and the call is re-sent in the legacy era.
func TestModernHintWrongReprobes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(legacyServer)
		// legacyServer echoes unknown methods; make tools/list -32601 when modern.
		tr.handlers = []func(*peer, jsonrpc.Message){reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == protocol.MethodToolsList && len(p.requests(protocol.MethodInitialize)) == 0 {
				p.replyErr(r, jsonrpc.CodeMethodNotFound, "no", nil)
				return
			}
			legacyServer(p, r)
		})}
		s := connected(t, tr, Config{EraHint: negotiation.EraModern})
		res, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
		if err != nil {
			t.Fatalf("Call: %v", err)
		}
		if s.Era() != negotiation.EraLegacy {
			t.Errorf("era = %v, want legacy", s.Era())
		}
		if string(res) != `{"echo":null}` {
			t.Errorf("result = %s", res)
		}
		want := []string{"tools/list", "server/discover", "initialize", "notifications/initialized", "tools/list"}
		checkDiff(t, "methods", want, tr.peer(0).methods())
	})
}

// TestModernHintConfirmed: a -32601 from a real modern server re-probes
// once, stays modern and returns the server's error without re-sending.
func TestModernHintConfirmed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(refusing(protocol.MethodToolsList, jsonrpc.CodeMethodNotFound, "no tools", modernServer))
		s := connected(t, tr, Config{EraHint: negotiation.EraModern})
		for range 2 {
			_, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
			if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
				t.Fatalf("Call error = %v, want -32601", err)
			}
		}
		want := []string{"tools/list", "server/discover", "tools/list"}
		checkDiff(t, "methods", want, tr.peer(0).methods())
		if s.Era() != negotiation.EraModern || s.Discover() == nil {
			t.Errorf("era = %v, discover %v", s.Era(), s.Discover())
		}
	})
}

// TestModernHintLegacyHTTPEvidence: a wrong modern era hint whose first
// request a legacy HTTP server refuses (the legacy evidence of the seed
// table) re-probes and ends in the legacy era.
func TestModernHintLegacyHTTPEvidence(t *testing.T) {
	rawErr := func(status int, body string) func(w http.ResponseWriter, req *jsonrpc.Request) {
		return func(w http.ResponseWriter, req *jsonrpc.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			io.WriteString(w, body)
		}
	}
	tests := []struct {
		name   string
		refuse func(w http.ResponseWriter, req *jsonrpc.Request)
	}{
		{"400-no-valid-session-id-null-id", rawErr(400, `{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request: No valid session ID provided"},"id":null}`)},
		{"400-no-valid-session-id-with-id", func(w http.ResponseWriter, req *jsonrpc.Request) {
			writeRPCError(w, http.StatusBadRequest, req, -32000, "Bad Request: no valid session ID")
		}},
		{"400-plain-text", func(w http.ResponseWriter, req *jsonrpc.Request) {
			http.Error(w, "Bad Request: missing session ID", 400)
		}},
		{"404-server-error", rawErr(404, `{"jsonrpc":"2.0","error":{"code":-32001,"message":"Session not found"},"id":null}`)},
		{"405-empty", func(w http.ResponseWriter, req *jsonrpc.Request) { w.WriteHeader(405) }},
		{"200-method-not-found", func(w http.ResponseWriter, req *jsonrpc.Request) {
			writeRPCError(w, http.StatusOK, req, jsonrpc.CodeMethodNotFound, "Method not found")
		}},
		{"500-method-not-found", func(w http.ResponseWriter, req *jsonrpc.Request) {
			writeRPCError(w, http.StatusInternalServerError, req, jsonrpc.CodeMethodNotFound, "Method not found")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &httpScript{}
			var initialized atomic.Bool
			h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				switch {
				case req.Method == protocol.MethodInitialize:
					initialized.Store(true)
					serveLegacyHTTP(w, req)
				case !initialized.Load():
					tt.refuse(w, req)
				default:
					serveLegacyHTTP(w, req)
				}
			}
			s := httpSession(t, h, Config{EraHint: negotiation.EraModern})
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Fatalf("Call: %v", err)
			}
			if s.Era() != negotiation.EraLegacy {
				t.Errorf("era = %v, want legacy", s.Era())
			}
			want := []string{"tools/list", "server/discover", "initialize", "notifications/initialized", "tools/list"}
			checkDiff(t, "methods", want, h.sent())
		})
	}
}

// TestProbeTimeoutHonoursConfig: a probe the stdio server leaves
// unanswered is given up after Config.ProbeTimeout, and after
// DefaultProbeTimeout (5 s) when that is zero or negative.
func TestProbeTimeoutHonoursConfig(t *testing.T) {
	tests := []struct {
		name    string
		timeout time.Duration
		want    time.Duration
	}{
		{"configured", time.Second, time.Second},
		{"zero", 0, 5 * time.Second},
		{"negative", -time.Second, 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
					if r.Method != protocol.MethodDiscover {
						legacyServer(p, r)
					}
				}))
				tr.kind = transport.KindStdio
				start := time.Now()
				s := connected(t, tr, Config{ProbeTimeout: tt.timeout})
				if got := time.Since(start); got != tt.want {
					t.Errorf("negotiation took %v of fake time, want the probe timeout %v", got, tt.want)
				}
				synctest.Wait()
				if !slices.Equal(tr.peer(0).methods(), []string{"server/discover", "initialize", "notifications/initialized"}) {
					t.Errorf("methods = %v", tr.peer(0).methods())
				}
				_ = s
			})
		})
	}
}

func TestConnectContextCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {}))
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		_, err := Connect(ctx, tr, Config{Mode: ModeLegacy})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Connect error = %v, want DeadlineExceeded", err)
		}
	})
}

// silentFirstProbe leaves the first server/discover unanswered and serves
// everything else with h.
func silentFirstProbe(h func(p *peer, m jsonrpc.Message)) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == protocol.MethodDiscover && len(p.requests(protocol.MethodDiscover)) == 1 {
			return
		}
		h(p, m)
	}
}

// refusing answers method with the JSON-RPC error code and serves
// everything else with next.
func refusing(method string, code int64, msg string, next func(p *peer, m jsonrpc.Message)) func(p *peer, m jsonrpc.Message) {
	return reqHandler(func(p *peer, r *jsonrpc.Request) {
		if r.Method == method {
			p.replyErr(r, code, msg, nil)
			return
		}
		next(p, r)
	})
}

// TestHintFailedReported: a hint that fails the negotiation is reported
// (HintFailed, a "hint" step in the trace) after the engine's fresh probe;
// a hint that holds is not.
func TestHintFailedReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(refusing(protocol.MethodInitialize, jsonrpc.CodeMethodNotFound, "no initialize here", modernServer))
		s := connected(t, tr, Config{EraHint: negotiation.EraLegacy})
		if !s.HintFailed() || s.Era() != negotiation.EraModern {
			t.Errorf("HintFailed, Era = %v, %v; want true, modern", s.HintFailed(), s.Era())
		}
		if !slices.ContainsFunc(s.Trace(), func(st TraceStep) bool { return st.Step == "hint" && st.Verdict == "re-probe" }) {
			t.Errorf("trace %+v has no re-probe step for the failed hint", s.Trace())
		}
		ok := connected(t, newScripted(legacyServer), Config{EraHint: negotiation.EraLegacy})
		if ok.HintFailed() {
			t.Error("HintFailed after a hint that held")
		}
	})
}

// TestNegotiationRequestTakesNoLoopTrip: a negotiation request registers

// directly in the pending table and the reader hands it its response, so

// that it completes while the loop is not running at all, and posts

// nothing to it.

func TestNegotiationRequestTakesNoLoopTrip(t *testing.T) {
	tr := newScripted(modernServer)
	s := newSession(t.Context(), tr, Config{})
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Play the loop's part in installing the connection (it owns no other
	// goroutine yet), without starting the loop.
	ref := s.install(conn)
	t.Cleanup(func() {
		s.wg.Add(1)
		go s.dispatcher()
		s.startLoop()
		s.Close()
		tr.wait()
	})
	d := &driver{s: s, t: tr, ctx: t.Context()}
	params, err := d.probeParams(ref, protocol.Version20260728)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		resp *jsonrpc.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := d.rpc(t.Context(), protocol.MethodDiscover, params)
		got <- answer{resp, err}
	}()
	select {
	case a := <-got:
		if a.err != nil || a.resp == nil || a.resp.Error != nil || len(a.resp.Result) == 0 {
			t.Fatalf("server/discover = %+v, %v; want its result", a.resp, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server/discover waited for the loop")
	}
	if n := len(s.events); n != 0 {
		t.Errorf("the request posted %d events to the loop, want none", n)
	}
	s.pending.mu.Lock()
	left := len(s.pending.calls)
	s.pending.mu.Unlock()
	if left != 0 {
		t.Errorf("%d calls left pending after the response", left)
	}
}

// TestNegotiationRequestAfterClose: once the session closed, negotiation

// traffic no longer registers directly on the last connection: it fails

// with ErrClosed and nothing more is written.

func TestNegotiationRequestAfterClose(t *testing.T) {
	tr := newScripted(modernServer)
	s := connected(t, tr, Config{})
	ref := s.pub.Load().ref
	d := &driver{s: s, t: tr, ctx: t.Context()}
	params, err := d.probeParams(ref, protocol.Version20260728)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tr.wait()
	before := len(tr.peer(0).requests(protocol.MethodDiscover))
	if _, err := d.rpc(t.Context(), protocol.MethodDiscover, params); !errors.Is(err, ErrClosed) {
		t.Errorf("server/discover after Close: err = %v, want ErrClosed", err)
	}
	if after := len(tr.peer(0).requests(protocol.MethodDiscover)); after != before {
		t.Errorf("server/discover after Close reached the server (%d → %d requests)", before, after)
	}
}

// TestRetrierDefaults: the zero RetryPolicy allows 5 attempts, waits
// 200 ms (±50%) first, never more than 5 s (±50%), and gives up once the
// next wait would end past 30 s from the start; a negative MaxAttempts
// allows no retry.
func TestRetrierDefaults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRetrier(RetryPolicy{})
		var waits []time.Duration
		for {
			d, ok := r.next(0)
			if !ok {
				break
			}
			waits = append(waits, d)
		}
		if len(waits) != 4 {
			t.Fatalf("zero policy: %d retries (%v), want 4 (5 attempts)", len(waits), waits)
		}
		if d := waits[0]; d < 100*time.Millisecond || d > 300*time.Millisecond {
			t.Errorf("first wait = %v, want 200ms ±50%%", d)
		}

		start := time.Now()
		r = newRetrier(RetryPolicy{MaxAttempts: 1000})
		retries := 0
		for {
			d, ok := r.next(0)
			if !ok {
				break
			}
			if d > 7500*time.Millisecond {
				t.Errorf("wait %d = %v, want at most 5s +50%%", retries+1, d)
			}
			retries++
			time.Sleep(d)
		}
		if el := time.Since(start); el > 30*time.Second || el < 30*time.Second-7500*time.Millisecond {
			t.Errorf("gave up after %v of waits (%d retries), want just under 30s", el, retries)
		}

		if _, ok := newRetrier(RetryPolicy{MaxAttempts: -1}).next(0); ok {
			t.Error("MaxAttempts -1: a retry allowed, want none")
		}
	})
}
