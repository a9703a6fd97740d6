package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// legacyAfterDiscover is a legacy HTTP server whose answer to
// server/discover is discover's.
func legacyAfterDiscover(discover func(w http.ResponseWriter, req *jsonrpc.Request)) func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
	return func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if req.Method == protocol.MethodDiscover {
			discover(w, req)
			return
		}
		serveLegacyHTTP(w, req)
	}
}

func TestHTTPProbe(t *testing.T) {
	tests := []struct {
		name    string
		serve   func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)
		cfg     Config
		era     negotiation.Era
		methods []string
		check   func(t *testing.T, err error)
	}{
		{
			name: "modern",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				serveModernHTTP(w, req)
			},
			era: negotiation.EraModern, methods: []string{"server/discover", "tools/list"},
		},
		{
			name: "400-empty-is-legacy",
			serve: legacyAfterDiscover(func(w http.ResponseWriter, req *jsonrpc.Request) {
				w.WriteHeader(http.StatusBadRequest)
			}),
			era: negotiation.EraLegacy, methods: []string{"server/discover", "initialize", "notifications/initialized", "tools/list"},
		},
		{
			name: "200-method-not-found-is-legacy",
			serve: legacyAfterDiscover(func(w http.ResponseWriter, req *jsonrpc.Request) {
				writeRPCError(w, http.StatusOK, req, jsonrpc.CodeMethodNotFound, "no")
			}),
			era: negotiation.EraLegacy, methods: []string{"server/discover", "initialize", "notifications/initialized", "tools/list"},
		},
		{
			name: "400-modern-body-is-modern",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				if n == 0 {
					b, _ := jsonrpc.EncodeMessage(jsonrpc.NewErrorResponse(req.ID, jsonrpc.ErrUnsupportedProtocolVersion.WithData(map[string]any{"supported": []string{"2026-07-28"}})))
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusBadRequest)
					w.Write(b)
					return
				}
				serveModernHTTP(w, req)
			},
			era: negotiation.EraModern, methods: []string{"server/discover", "server/discover", "tools/list"},
		},
		{
			name: "503-retries-never-downgrades",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				if n < 2 {
					w.Header().Set("Retry-After", "0")
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				serveModernHTTP(w, req)
			},
			era: negotiation.EraModern, methods: []string{"server/discover", "server/discover", "server/discover", "tools/list"},
		},
		{
			name: "503-retries-exhausted",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				w.WriteHeader(http.StatusServiceUnavailable)
			},
			cfg:     Config{Retry: RetryPolicy{MaxAttempts: 3, InitialInterval: time.Millisecond}},
			methods: []string{"server/discover", "server/discover", "server/discover"},
			check: func(t *testing.T, err error) {
				var he *transport.HTTPError
				if !errors.As(err, &he) || he.StatusCode != 503 {
					t.Errorf("error = %v, want the 503", err)
				}
			},
		},
		{
			name: "401-without-hook",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
				w.WriteHeader(http.StatusUnauthorized)
			},
			methods: []string{"server/discover"},
			check: func(t *testing.T, err error) {
				ae, ok := errors.AsType[*AuthRequiredError](err)
				if !ok || ae.Status != 401 || ae.Challenge == "" || ae.Err == nil {
					t.Errorf("error = %v, want *AuthRequiredError with the challenge", err)
				}
			},
		},
		{
			name: "401-hook-then-modern",
			serve: func(n int, w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				if r.Header.Get("Authorization") != "Bearer tok" {
					w.Header().Set("WWW-Authenticate", `Bearer`)
					w.WriteHeader(http.StatusUnauthorized)
					return
				}
				serveModernHTTP(w, req)
			},
			era: negotiation.EraModern, methods: []string{"server/discover", "server/discover", "tools/list"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n atomic.Int32
			h := &httpScript{}
			h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
				tt.serve(int(n.Add(1)-1), w, r, req)
			}
			var token atomic.Value
			token.Store("")
			cfg := tt.cfg
			var tr *transport.StreamableHTTP
			if tt.name == "401-hook-then-modern" {
				cfg.Authorize = func(ctx context.Context, challenge *transport.HTTPError) error {
					token.Store("tok")
					return nil
				}
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			tr = &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true,
				TokenSource: transport.TokenSourceFunc(func(ctx context.Context) (string, error) { return token.Load().(string), nil })}
			if cfg.Retry == (RetryPolicy{}) {
				cfg.Retry = RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}
			}
			s, err := Connect(t.Context(), tr, cfg)
			if tt.check != nil {
				if err == nil {
					s.Close()
					t.Fatal("Connect succeeded, want an error")
				}
				tt.check(t, err)
			} else {
				if err != nil {
					t.Fatalf("Connect: %v", err)
				}
				defer s.Close()
				if s.Era() != tt.era {
					t.Errorf("era = %v, want %v (trace %+v)", s.Era(), tt.era, s.Trace())
				}
				if _, err := s.Call(t.Context(), "tools/list", nil, nil); err != nil {
					t.Errorf("Call: %v", err)
				}
			}
			checkDiff(t, "methods POSTed", tt.methods, h.sent())
		})
	}
}

// TestHTTPModernHeaders: a modern session's requests carry the version
// header matching _meta, and CallOptions.Headers reach the POST.
func TestHTTPModernHeaders(t *testing.T) {
	h := &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) { serveModernHTTP(w, req) }}
	s := httpSession(t, h, Config{})
	hdr := http.Header{"Mcp-Param-Region": {"eu"}}
	if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "t"}, &CallOptions{Headers: hdr}); err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	last := h.headers[len(h.headers)-1]
	if last.Get(protocol.HeaderProtocolVersion) != protocol.Version20260728 || last.Get("Mcp-Param-Region") != "eu" || last.Get(protocol.HeaderName) != "t" {
		t.Errorf("headers = %v", last)
	}
}

// TestHTTPSessionExpired: a legacy HTTP session answered 404 is
// re-initialized and the failed request replayed once.
func TestHTTPSessionExpired(t *testing.T) {
	var sessions atomic.Int32
	var expired atomic.Bool
	h := &httpScript{}
	h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch req.Method {
		case protocol.MethodDiscover:
			w.WriteHeader(http.StatusNotFound)
		case protocol.MethodInitialize:
			sessions.Add(1)
			serveLegacyHTTP(w, req)
		default:
			if !expired.Swap(true) {
				w.WriteHeader(http.StatusNotFound)
				return
			}
			serveLegacyHTTP(w, req)
		}
	}
	s := httpSession(t, h, Config{})
	res, err := s.Call(t.Context(), "tools/list", nil, nil)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	if string(res) != `{"echo":null}` || sessions.Load() != 2 {
		t.Errorf("result %s after %d sessions, want a re-initialized session", res, sessions.Load())
	}
	want := []string{"server/discover", "initialize", "notifications/initialized", "tools/list", "initialize", "notifications/initialized", "tools/list"}
	checkDiff(t, "methods", want, h.sent())
}

// TestHTTPModernCancelClosesStream: on modern HTTP, cancelling a call
// closes its response stream (the server sees its request context end)
// and no notifications/cancelled is POSTed.
func TestHTTPModernCancelClosesStream(t *testing.T) {
	serverSawCancel := make(chan struct{})
	streamOpen := make(chan struct{})
	h := toolCallScript(serveModernHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		close(streamOpen)
		<-r.Context().Done()
		close(serverSawCancel)
	})
	s := httpSession(t, h, Config{})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "slow"}, nil)
		errc <- err
	}()
	<-streamOpen
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call error = %v, want Canceled", err)
	}
	<-serverSawCancel
	for _, m := range h.sent() {
		if m == protocol.NotificationCancelled {
			t.Error("notifications/cancelled POSTed on modern HTTP")
		}
	}
}

// TestHTTPLegacyCancelClosesStream: on legacy HTTP, abandoning a call
// sends notifications/cancelled and also closes the request's response
// stream (the server sees the request's context end).
func TestHTTPLegacyCancelClosesStream(t *testing.T) {
	serverSawClose := make(chan struct{})
	streamOpen := make(chan struct{})
	h := toolCallScript(serveLegacyHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		var pm struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(req.Params, &pm)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: e1\ndata: \n\n") // a priming event: resumable
		// A progress notification tells the test that the client reads
		// the stream (so the request was written).
		io.WriteString(w, `id: e2`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+string(pm.Meta[protocol.MetaProgressToken])+`,"progress":1}}`+"\n\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
		close(serverSawClose)
	})
	sawCancelled := make(chan struct{})
	var once, cancelledOnce sync.Once
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if strings.Contains(string(body), protocol.NotificationCancelled) {
				cancelledOnce.Do(func() { close(sawCancelled) })
			}
			r.Body = io.NopCloser(strings.NewReader(string(body)))
		}
		h.ServeHTTP(w, r)
	})
	s := httpSession(t, wrapped, Config{Mode: ModeLegacy})
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "slow"}, &CallOptions{Progress: func(protocol.ProgressParams) {
			once.Do(func() { close(streamOpen) })
		}})
		errc <- err
	}()
	waitOrFail(t, streamOpen, "reading the response stream")
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call error = %v, want Canceled", err)
	}
	waitOrFail(t, sawCancelled, "POSTing notifications/cancelled")
	waitOrFail(t, serverSawClose, "closing the legacy response stream")
}

// TestHTTPBrokenStreamResends: a modern response stream that ends without
// the response loses the request; it is re-sent once under a new id.
func TestHTTPBrokenStreamResends(t *testing.T) {
	var calls atomic.Int32
	var ids sync.Map
	h := toolCallScript(serveModernHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if _, dup := ids.LoadOrStore(req.ID, true); dup {
			t.Errorf("id %v re-used", req.ID)
		}
		if calls.Add(1) == 1 {
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			return // the stream ends without a response
		}
		serveModernHTTP(w, req)
	})
	s := httpSession(t, h, Config{Replay: ReplayAll})
	if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "t"}, nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if calls.Load() != 2 {
		t.Errorf("tools/call POSTed %d times, want 2", calls.Load())
	}
	calls.Store(0)
	_, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "t"}, &CallOptions{Replay: ReplayNone})
	if !errors.Is(err, ErrConnectionLost) || !errors.Is(err, transport.ErrStreamBroken) {
		t.Errorf("ReplayNone Call error = %v, want a lost stream", err)
	}
}

// TestHTTPFallback: initialize answered 404 without a modern body moves to
// Config.Fallback and initializes there.
func TestHTTPFallback(t *testing.T) {
	h := &httpScript{}
	h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		w.WriteHeader(http.StatusNotFound)
	}
	fb := newScripted(legacyServer)
	s, _, err := httpConnect(t, h, Config{Fallback: fb})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	if s.Era() != negotiation.EraLegacy || s.TransportKind() != transport.KindMemory {
		t.Errorf("era, kind = %v, %q", s.Era(), s.TransportKind())
	}
	if _, err := s.Call(t.Context(), "tools/list", nil, nil); err != nil {
		t.Errorf("Call: %v", err)
	}
	checkDiff(t, "methods to the HTTP endpoint", []string{"server/discover", "initialize"}, h.sent())
	checkDiff(t, "methods to the fallback", []string{"initialize", "notifications/initialized", "tools/list"}, fb.peer(0).methods())
	s.Close()
	fb.wait()
}

// TestHTTPCallRetries: a request answered 503 is re-sent with backoff.
func TestHTTPCallRetries(t *testing.T) {
	var calls atomic.Int32
	h := &httpScript{}
	h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if req.Method == protocol.MethodToolsList && calls.Add(1) < 3 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		serveModernHTTP(w, req)
	}
	s := httpSession(t, h, Config{})
	if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("tools/list POSTed %d times, want 3", calls.Load())
	}
	calls.Store(-100)
	_, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
	if he, ok := errors.AsType[*transport.HTTPError](err); !ok || he.StatusCode != 503 {
		t.Errorf("Call error = %v, want the 503 after the retries", err)
	}
}

// TestHTTPTakenResponsesAreGoodReads: over Streamable HTTP the answers in
// JSON bodies reach their callers without the reader (the connection's
// ResponseTaker), and still count as good reads: broken response streams
// between them, more than maxBadReads in all but never that many in a
// row, do not heal the connection.
func TestHTTPTakenResponsesAreGoodReads(t *testing.T) {
	s := httpSession(t, &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if req.Method == "broken" {
			// An event stream that ends without the response: a
			// *transport.StreamError, a bad read.
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			return
		}
		serveModernHTTP(w, req)
	}}, Config{Mode: ModeModern})
	ctx := t.Context()
	for i := range maxBadReads + 20 {
		if _, err := s.Call(ctx, "broken", nil, &CallOptions{Replay: ReplayNone}); err == nil {
			t.Fatalf("call %d on a broken stream succeeded", i)
		}
		if _, err := s.Call(ctx, "tools/call", map[string]string{"name": "x"}, nil); err != nil {
			t.Fatalf("good call %d: %v", i, err)
		}
	}
	if g := s.Generation(); g != 1 {
		t.Errorf("Generation = %d after %d broken streams, each followed by a good answer; want 1 (no heal)", g, maxBadReads+20)
	}
}
