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
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// testBound bounds waits for events that must happen; reaching it is a
// test failure, not a timing assertion.
const testBound = 10 * time.Second

func waitOrFail(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(testBound):
		t.Fatalf("%s did not happen", what)
	}
}

// authServer wraps serve: requests whose Authorization is not "Bearer "+good()
// (and whose method refuse accepts) are answered with status and a
// WWW-Authenticate challenge.
type authServer struct {
	h      *httpScript
	good   atomic.Value // string
	status int
	refuse func(method string) bool
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.h.ServeHTTP(w, r)
}

func newAuthServer(status int, refuse func(string) bool, serve func(w http.ResponseWriter, req *jsonrpc.Request)) *authServer {
	a := &authServer{status: status, refuse: refuse}
	a.good.Store("old")
	a.h = &httpScript{}
	a.h.serve = func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if a.refuse(req.Method) && r.Header.Get("Authorization") != "Bearer "+a.good.Load().(string) {
			if a.status == http.StatusForbidden {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tools:write"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			}
			w.WriteHeader(a.status)
			return
		}
		serve(w, req)
	}
	return a
}

// authTransport is a Streamable HTTP transport whose bearer token the
// test's Authorize hook replaces.
func authTransport(t *testing.T, h http.Handler, token *atomic.Value) *transport.StreamableHTTP {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true, HeaderFunc: func(ctx context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token.Load().(string))
		return nil
	}}
}

// TestAuthorizeOnRequest: a 401 or 403 on a request after connecting (an
// expired token, a scope step-up) calls Config.Authorize with the
// challenge and re-sends the request with the new credentials.
func TestAuthorizeOnRequest(t *testing.T) {
	tests := []struct {
		name   string
		status int
		serve  func(w http.ResponseWriter, req *jsonrpc.Request)
		mode   Mode
		era    negotiation.Era
	}{
		{"modern-401-expired", http.StatusUnauthorized, serveModernHTTP, ModeAuto, negotiation.EraModern},
		{"modern-403-step-up", http.StatusForbidden, serveModernHTTP, ModeAuto, negotiation.EraModern},
		{"legacy-401-expired", http.StatusUnauthorized, serveLegacyHTTP, ModeLegacy, negotiation.EraLegacy},
		{"legacy-403-step-up", http.StatusForbidden, serveLegacyHTTP, ModeLegacy, negotiation.EraLegacy},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var token atomic.Value
			token.Store("old")
			a := newAuthServer(tt.status, func(m string) bool { return m == protocol.MethodToolsCall }, tt.serve)
			tr := authTransport(t, a, &token)
			var challenges []string
			var mu sync.Mutex
			cfg := Config{Mode: tt.mode, Authorize: func(ctx context.Context, he *transport.HTTPError) error {
				mu.Lock()
				challenges = append(challenges, he.WWWAuthenticate)
				mu.Unlock()
				token.Store("new")
				return nil
			}}
			a.good.Store("old")
			s, err := Connect(t.Context(), tr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if s.Era() != tt.era {
				t.Fatalf("era = %v, want %v", s.Era(), tt.era)
			}
			// The token expires (or the tool needs a wider scope).
			a.good.Store("rotated")
			if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, nil); err == nil {
				// Authorize sets "new", the server wants "rotated": refused twice.
				t.Fatal("Call succeeded with a token the server refuses")
			} else if _, ok := errors.AsType[*AuthRequiredError](err); !ok {
				t.Fatalf("Call error = %v, want *AuthRequiredError", err)
			}
			mu.Lock()
			if len(challenges) != maxCallAuthAttempts {
				t.Errorf("Authorize called %d times, want %d", len(challenges), maxCallAuthAttempts)
			}
			challenges = nil
			mu.Unlock()
			// Now Authorize obtains what the server wants.
			a.good.Store("new")
			token.Store("old")
			res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, nil)
			if err != nil {
				t.Fatalf("Call after Authorize: %v", err)
			}
			if !strings.Contains(string(res), `"echo"`) {
				t.Errorf("result = %s", res)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(challenges) != 1 || !strings.Contains(challenges[0], "Bearer") {
				t.Errorf("challenges = %q, want one Bearer challenge", challenges)
			}
		})
	}
}

// TestAuthorizeOnInitialize: a 401 on initialize (legacy mode, a pinned
// legacy version, after the probe's legacy verdict) calls Authorize and
// initializes again.
func TestAuthorizeOnInitialize(t *testing.T) {
	serve := func(w http.ResponseWriter, req *jsonrpc.Request) {
		if req.Method == protocol.MethodDiscover {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		serveLegacyHTTP(w, req)
	}
	tests := []struct {
		name string
		cfg  Config
		want []string
	}{
		{"legacy-mode", Config{Mode: ModeLegacy}, []string{"initialize", "initialize", "notifications/initialized", "tools/list"}},
		{"pinned-legacy", Config{Mode: ModePinned, PinVersion: protocol.Version20250618}, []string{"initialize", "initialize", "notifications/initialized", "tools/list"}},
		{"after-legacy-verdict", Config{}, []string{"server/discover", "initialize", "initialize", "notifications/initialized", "tools/list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var token atomic.Value
			token.Store("old")
			a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodInitialize }, serve)
			a.good.Store("new")
			tr := authTransport(t, a, &token)
			calls := 0
			cfg := tt.cfg
			cfg.Authorize = func(ctx context.Context, he *transport.HTTPError) error {
				calls++
				token.Store("new")
				return nil
			}
			s, err := Connect(t.Context(), tr, cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if calls != 1 {
				t.Errorf("Authorize called %d times, want 1", calls)
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, a.h.sent()); diff != "" {
				t.Errorf("methods (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("no-hook", func(t *testing.T) {
		var token atomic.Value
		token.Store("old")
		a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodInitialize }, serve)
		a.good.Store("new")
		_, err := Connect(t.Context(), authTransport(t, a, &token), Config{Mode: ModeLegacy})
		if _, ok := errors.AsType[*AuthRequiredError](err); !ok {
			t.Fatalf("Connect error = %v, want *AuthRequiredError", err)
		}
	})
}

// TestAuthorizeConcurrentCalls: several calls refused at once each call
// Authorize on their own goroutine; the calls are not serialized (every
// Authorize is entered before any returns).
func TestAuthorizeConcurrentCalls(t *testing.T) {
	const n = 4
	var token atomic.Value
	token.Store("old")
	a := newAuthServer(http.StatusUnauthorized, func(m string) bool { return m == protocol.MethodToolsCall }, serveModernHTTP)
	tr := authTransport(t, a, &token)
	var entered atomic.Int32
	all := make(chan struct{})
	cfg := Config{Authorize: func(ctx context.Context, he *transport.HTTPError) error {
		if entered.Add(1) == n {
			close(all)
		}
		select {
		case <-all:
		case <-ctx.Done():
			return ctx.Err()
		}
		token.Store("new")
		return nil
	}}
	s, err := Connect(t.Context(), tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	a.good.Store("new")
	ctx, cancel := context.WithTimeout(t.Context(), testBound)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			_, errs[i] = s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "x"}, nil)
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("call %d: %v", i, err)
		}
	}
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
			s, _, err := httpConnect(t, h, Config{EraHint: negotiation.EraModern})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Fatalf("Call: %v", err)
			}
			if s.Era() != negotiation.EraLegacy {
				t.Errorf("era = %v, want legacy", s.Era())
			}
			want := []string{"tools/list", "server/discover", "initialize", "notifications/initialized", "tools/list"}
			if diff := cmp.Diff(want, h.sent()); diff != "" {
				t.Errorf("methods (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallCancelledContextNoRace: a call whose context is cancelled
// before it starts returns ctx.Err() while the loop may still be
// registering it; nothing the loop writes is read by the caller (run with
// -race). The era hint makes the error path consult the hint state.
func TestCallCancelledContextNoRace(t *testing.T) {
	for _, hint := range []negotiation.Era{negotiation.EraUnknown, negotiation.EraModern} {
		t.Run(hint.String(), func(t *testing.T) {
			tr := newScripted(modernServer)
			s, err := connect(t, tr, Config{EraHint: hint})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(t.Context())
			cancel()
			for range 200 {
				if _, err := s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "x"}, nil); !errors.Is(err, context.Canceled) {
					t.Fatalf("Call error = %v, want context.Canceled", err)
				}
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Errorf("later Call: %v", err)
			}
		})
	}
}

// progressServer sends n progress notifications for every tools/call
// that carries a progress token, then the result.
func progressServer(n int, base func(p *peer, m jsonrpc.Message), modern bool) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.Method != protocol.MethodToolsCall {
			base(p, m)
			return
		}
		var pm struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		json.Unmarshal(req.Params, &pm)
		tok := pm.Meta[protocol.MetaProgressToken]
		for i := range n {
			p.notify(protocol.NotificationProgress, map[string]any{"progressToken": tok, "progress": i + 1, "total": n})
		}
		p.notify(protocol.NotificationMessage, map[string]any{"level": "info", "data": "done"})
		p.reply(req, echoResult(nil, modern))
	}
}

// TestProgressDeliveredBeforeReturn: every progress notification (and log
// message) the server sent before the response has been delivered when
// Call returns, in both eras, even with slow callbacks.
func TestProgressDeliveredBeforeReturn(t *testing.T) {
	const n = 50
	for _, era := range []negotiation.Era{negotiation.EraModern, negotiation.EraLegacy} {
		t.Run(era.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				base, mode := modernServer, ModeAuto
				if era == negotiation.EraLegacy {
					base, mode = legacyServer, ModeLegacy
				}
				var logs atomic.Int32
				h := handler.LogListenerFunc(func(ctx context.Context, p *protocol.LoggingMessageParams) {
					time.Sleep(time.Millisecond)
					logs.Add(1)
				})
				tr := newScripted(progressServer(n, base, era == negotiation.EraModern))
				s, err := connect(t, tr, Config{Mode: mode, Handler: handler.Detect(h)})
				if err != nil {
					t.Fatal(err)
				}
				var count atomic.Int32
				opts := &CallOptions{Progress: func(protocol.ProgressParams) {
					time.Sleep(time.Millisecond) // slow user code
					count.Add(1)
				}}
				for i := range 3 {
					count.Store(0)
					logs.Store(0)
					if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, opts); err != nil {
						t.Fatal(err)
					}
					if got := count.Load(); got != n {
						t.Errorf("call %d: %d progress callbacks ran before Call returned, want %d", i, got, n)
					}
					if got := logs.Load(); got != 1 {
						t.Errorf("call %d: %d log messages delivered before Call returned, want 1", i, got)
					}
				}
			})
		})
	}
}

// TestTasksGetAcceptsTaskResultType: tasks/get results may say
// resultType "complete" or "task" (OPEN-QUESTIONS 38); other methods
// still reject "task" unless allowed.
func TestTasksGetAcceptsTaskResultType(t *testing.T) {
	for _, rt := range []string{"complete", "task"} {
		t.Run(rt, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(reqHandler(func(p *peer, req *jsonrpc.Request) {
					switch req.Method {
					case protocol.MethodDiscover:
						p.reply(req, discoverResult)
					default:
						p.reply(req, map[string]any{"resultType": rt, "taskId": "t1", "status": "working"})
					}
				}))
				s, err := connect(t, tr, Config{})
				if err != nil {
					t.Fatal(err)
				}
				res, err := s.Call(t.Context(), protocol.MethodTasksGet, map[string]any{"taskId": "t1"}, nil)
				if err != nil {
					t.Fatalf("tasks/get: %v", err)
				}
				var got struct {
					TaskID string `json:"taskId"`
				}
				json.Unmarshal(res, &got)
				if got.TaskID != "t1" {
					t.Errorf("result = %s", res)
				}
				_, err = s.Call(t.Context(), protocol.MethodToolsList, nil, nil)
				if wantErr := rt == "task"; (err != nil) != wantErr {
					t.Errorf("tools/list with resultType %q: error = %v, want error %v", rt, err, wantErr)
				}
			})
		})
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
	s, _, err := httpConnect(t, wrapped, Config{Mode: ModeLegacy})
	if err != nil {
		t.Fatal(err)
	}
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

// getStreamServer is a legacy Streamable HTTP server with a GET stream
// that opens slowly. A tools/call sends elicitation/create on the GET
// stream if it is open (and answers with the elicitation's action), and
// otherwise drops it, as real servers do, answering "dropped".
type getStreamServer struct {
	initialized chan struct{} // closed on notifications/initialized
	initOnce    sync.Once
	open        atomic.Bool
	toGET       chan []byte
	mu          sync.Mutex
	answers     map[string]chan json.RawMessage
}

func newGETStreamServer() *getStreamServer {
	return &getStreamServer{initialized: make(chan struct{}), toGET: make(chan []byte, 4), answers: map[string]chan json.RawMessage{}}
}

func (g *getStreamServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		select {
		case <-g.initialized:
		case <-r.Context().Done():
			return
		}
		// A server that is slow to open the stream.
		time.Sleep(150 * time.Millisecond)
		g.open.Store(true) // before the client can see the headers
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		for {
			select {
			case b := <-g.toGET:
				w.Write([]byte("data: "))
				w.Write(b)
				w.Write([]byte("\n\n"))
				w.(http.Flusher).Flush()
			case <-r.Context().Done():
				return
			}
		}
	case http.MethodDelete:
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodPost:
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	m, ok := decodePosted(w, r)
	if !ok {
		return
	}
	switch m := m.(type) {
	case *jsonrpc.Response:
		g.mu.Lock()
		ch := g.answers[m.ID.String()]
		g.mu.Unlock()
		if ch != nil {
			ch <- m.Result
		}
		w.WriteHeader(http.StatusAccepted)
		return
	case *jsonrpc.Request:
		if m.IsNotification() {
			if m.Method == protocol.NotificationInitialized {
				g.initOnce.Do(func() { close(g.initialized) })
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if m.Method != protocol.MethodToolsCall {
			serveLegacyHTTP(w, m)
			return
		}
		if !g.open.Load() {
			writeResult(w, m, map[string]any{"dropped": true})
			return
		}
		id := jsonrpc.StringID("elicit-1")
		ch := make(chan json.RawMessage, 1)
		g.mu.Lock()
		g.answers[id.String()] = ch
		g.mu.Unlock()
		req, _ := jsonrpc.NewRequest(id, protocol.MethodElicitationCreate, map[string]any{
			"message":         "name?",
			"requestedSchema": map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}},
		})
		b, _ := jsonrpc.EncodeMessage(req)
		g.toGET <- b
		select {
		case res := <-ch:
			writeResult(w, m, map[string]any{"elicited": res})
		case <-r.Context().Done():
		}
	}
}

// TestHTTPLegacyGETStreamServerRequest: after the legacy handshake the
// session waits (bounded) for the GET stream to open, so a server request
// sent on it right away is received; the handler answers it.
func TestHTTPLegacyGETStreamServerRequest(t *testing.T) {
	g := newGETStreamServer()
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	tr := &transport.StreamableHTTP{URL: srv.URL}
	el := handler.ElicitorFunc(func(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: "accept", Content: map[string]any{"name": "conduit"}}, nil
	})
	s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy, Handler: handler.Detect(el)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "ask"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Dropped  bool                  `json:"dropped"`
		Elicited protocol.ElicitResult `json:"elicited"`
	}
	if err := json.Unmarshal(res, &got); err != nil {
		t.Fatal(err)
	}
	if got.Dropped {
		t.Fatal("the server request was sent before the GET stream was open and dropped")
	}
	want := protocol.ElicitResult{Action: "accept", Content: map[string]any{"name": "conduit"}}
	if diff := cmp.Diff(want, got.Elicited); diff != "" {
		t.Errorf("elicitation answer (-want +got):\n%s", diff)
	}
}
