package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// getServer is a legacy Streamable HTTP server that declares caps,
// records every request in order (POSTs by JSON-RPC method, "GET" for the
// GET stream) and sends what push is given on its GET stream. A push
// while no GET stream is open is lost, as on a server that does not
// buffer; the test then fails.
type getServer struct {
	t    *testing.T
	caps map[string]any
	// after, when set, is pushed on the GET stream once the POST of
	// method was answered.
	after map[string]*jsonrpc.Request

	reqLog
	mu     sync.Mutex
	stream chan []byte // guarded by mu: the open GET stream's queue; nil while none
}

// reqLog is what a test server saw, in order.
type reqLog struct {
	mu  sync.Mutex
	log []string
}

func (l *reqLog) record(what string) {
	l.mu.Lock()
	l.log = append(l.log, what)
	l.mu.Unlock()
}

func (l *reqLog) requests() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

// waitRequests returns the requests once there are at least n (waiting at
// most 5 s).
func (l *reqLog) waitRequests(n int) []string {
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if log := l.requests(); len(log) >= n || time.Now().After(deadline) {
			return log
		}
	}
}

// push sends n on the open GET stream.
func (g *getServer) push(n *jsonrpc.Request) {
	b, _ := jsonrpc.EncodeMessage(n)
	g.mu.Lock()
	ch := g.stream
	g.mu.Unlock()
	if ch == nil {
		g.t.Errorf("%s lost: no GET stream open", n.Method)
		return
	}
	ch <- b
}

func (g *getServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodGet:
		g.serveGET(w, r)
	case http.MethodPost:
		g.servePOST(w, r)
	default:
		g.record(r.Method)
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

func (g *getServer) serveGET(w http.ResponseWriter, r *http.Request) {
	g.record("GET")
	ch := make(chan []byte, 8)
	g.mu.Lock()
	g.stream = ch
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.stream = nil
		g.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for {
		select {
		case b := <-ch:
			fmt.Fprintf(w, "data: %s\n\n", b)
			w.(http.Flusher).Flush()
		case <-r.Context().Done():
			return
		}
	}
}

func (g *getServer) servePOST(w http.ResponseWriter, r *http.Request) {
	m, ok := decodePosted(w, r)
	if !ok {
		return
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		g.record("response")
		w.WriteHeader(http.StatusAccepted)
		return
	}
	g.record(req.Method)
	switch {
	case req.IsNotification():
		w.WriteHeader(http.StatusAccepted)
	case req.Method == protocol.MethodDiscover:
		writeRPCError(w, http.StatusBadRequest, req, -32601, "unknown method")
	case req.Method == protocol.MethodInitialize:
		res := initResult(protocol.LatestLegacyVersion)
		res["capabilities"] = g.caps
		w.Header().Set(protocol.HeaderSessionID, "sess-get")
		writeResult(w, req, res)
	default:
		writeResult(w, req, map[string]any{})
		if n := g.after[req.Method]; n != nil {
			w.(http.Flusher).Flush()
			g.push(n)
		}
	}
}

// connectGET connects a session to g over Streamable HTTP (GET stream
// enabled); notifications the session does not consume arrive on the
// returned channel.
func connectGET(t *testing.T, g *getServer, cfg Config) (*Session, <-chan string) {
	t.Helper()
	g.t = t
	srv := httptest.NewServer(g)
	t.Cleanup(srv.Close)
	got := make(chan string, 16)
	cfg.OnNotification = func(_ context.Context, n *jsonrpc.Request) {
		select {
		case got <- n.Method:
		default:
		}
	}
	s, err := Connect(t.Context(), &transport.StreamableHTTP{URL: srv.URL}, cfg)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, got
}

// wantNotification waits (bounded) for method on got.
func wantNotification(t *testing.T, got <-chan string, method string) {
	t.Helper()
	select {
	case m := <-got:
		if m != method {
			t.Errorf("notification %q, want %q", m, method)
		}
	case <-time.After(5 * time.Second):
		t.Errorf("notification %q never arrived", method)
	}
}

func countGET(log []string) int {
	n := 0
	for _, m := range log {
		if m == "GET" {
			n++
		}
	}
	return n
}

// TestHTTPLegacyNoGETWithoutCapabilities: when neither side declares
// anything that arrives outside a request, the legacy connect sends no
// GET: initialize and initialized only, and calls go on POST alone.
func TestHTTPLegacyNoGETWithoutCapabilities(t *testing.T) {
	g := &getServer{caps: map[string]any{"tools": map[string]any{}, "completions": map[string]any{}}}
	s, _ := connectGET(t, g, Config{})
	if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	want := []string{"server/discover", "initialize", "notifications/initialized", "tools/list"}
	if got := g.requests(); !slices.Equal(got, want) {
		t.Errorf("requests = %q, want %q", got, want)
	}
}

// TestHTTPLegacyGETAtConnect: a client capability that invites server
// requests, or a server capability that announces messages outside a
// request together with a consumer of them from the start (a listener of
// the handler for that kind, or a Middleware), opens the GET stream
// during the connect (before Connect returns, beside initialized), and
// what the server sends on it right away arrives.
func TestHTTPLegacyGETAtConnect(t *testing.T) {
	noop := func(context.Context) {}
	cases := []struct {
		name   string
		caps   map[string]any
		client func(*protocol.ClientCapabilities)
		cfg    Config
	}{
		{"logging+listener", map[string]any{"logging": map[string]any{}}, nil,
			Config{Handler: &handler.Set{LogListener: handler.LogListenerFunc(func(context.Context, *protocol.LoggingMessageParams) {})}}},
		{"tools.listChanged+listener", map[string]any{"tools": map[string]any{"listChanged": true}}, nil,
			Config{Handler: &handler.Set{ToolsChanged: handler.ToolsChangedListenerFunc(noop)}}},
		{"prompts.listChanged+listener", map[string]any{"prompts": map[string]any{"listChanged": true}}, nil,
			Config{Handler: &handler.Set{PromptsChanged: handler.PromptsChangedListenerFunc(noop)}}},
		{"resources.listChanged+listener", map[string]any{"resources": map[string]any{"listChanged": true}}, nil,
			Config{Handler: &handler.Set{ResourcesChanged: handler.ResourcesChangedListenerFunc(noop)}}},
		{"tasks+listener", map[string]any{"tasks": map[string]any{"list": map[string]any{}}}, nil,
			Config{Handler: &handler.Set{TaskStatus: handler.TaskStatusListenerFunc(func(context.Context, *protocol.Task) {})}}},
		{"elicitation complete listener", map[string]any{}, nil,
			Config{Handler: &handler.Set{ElicitationDone: handler.ElicitationCompleteListenerFunc(func(context.Context, string) {})}}},
		{"experimental+middleware", map[string]any{"experimental": map[string]any{"x": map[string]any{}}}, nil,
			Config{Middleware: func(ctx context.Context, m *Message, next Invoker) (json.RawMessage, error) { return next(ctx, m) }}},
		{"client roots", map[string]any{}, func(c *protocol.ClientCapabilities) { c.Roots = &protocol.RootsCapability{} }, Config{}},
		{"client sampling", map[string]any{}, func(c *protocol.ClientCapabilities) { c.Sampling = &protocol.SamplingCapability{} }, Config{}},
		{"client elicitation", map[string]any{}, func(c *protocol.ClientCapabilities) { c.Elicitation = &protocol.ElicitationCapability{} }, Config{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := &getServer{caps: tc.caps}
			cfg := tc.cfg
			cfg.ExtraCapabilities = tc.client
			_, got := connectGET(t, g, cfg)
			// The GET has answered when Connect returns; it overlaps
			// notifications/initialized, whose answer Connect does not
			// wait for: either order, and initialized may come later.
			if n := countGET(g.requests()); n != 1 {
				t.Errorf("GET requests when Connect returned: %d, want 1", n)
			}
			want := []string{"server/discover", "initialize", "GET", "notifications/initialized"}
			log := g.waitRequests(len(want))
			slices.Sort(log[2:])
			if !slices.Equal(log, want) {
				t.Errorf("requests = %q, want %q", log, want)
			}
			g.push(&jsonrpc.Request{Method: protocol.NotificationToolsListChanged})
			wantNotification(t, got, protocol.NotificationToolsListChanged)
		})
	}
}

// TestHTTPLegacyNoGETWithoutConsumer: a server that declares everything
// it may send outside a request, to a client without a listener for it
// (or with listeners only for kinds the server does not declare), no
// Middleware and no capability inviting server requests: the connect
// sends no GET, and neither do calls that leave nothing for the server to
// change (tools/call, a list whose listChanged is not declared).
func TestHTTPLegacyNoGETWithoutConsumer(t *testing.T) {
	all := map[string]any{
		"logging": map[string]any{}, "tools": map[string]any{"listChanged": true},
		"prompts":   map[string]any{"listChanged": true},
		"resources": map[string]any{"listChanged": true, "subscribe": true},
		"tasks":     map[string]any{"list": map[string]any{}}, "experimental": map[string]any{"x": map[string]any{}},
	}
	noop := func(context.Context) {}
	for _, tc := range []struct {
		name string
		caps map[string]any
		cfg  Config
	}{
		{"no listeners", all, Config{}},
		{"listeners for undeclared kinds", map[string]any{"tools": map[string]any{}, "resources": map[string]any{"subscribe": true}},
			Config{Handler: &handler.Set{
				ToolsChanged:    handler.ToolsChangedListenerFunc(noop),
				LogListener:     handler.LogListenerFunc(func(context.Context, *protocol.LoggingMessageParams) {}),
				ResourceUpdated: handler.ResourceUpdatedListenerFunc(func(context.Context, string) {}),
			}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &getServer{caps: tc.caps}
			s, _ := connectGET(t, g, tc.cfg)
			if _, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]any{"name": "x"}, nil); err != nil {
				t.Fatalf("tools/call: %v", err)
			}
			want := []string{"server/discover", "initialize", "notifications/initialized", "tools/call"}
			if _, ok := tc.caps["prompts"]; !ok {
				if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
					t.Fatalf("tools/list: %v", err)
				}
				want = append(want, "tools/list")
			}
			if log := g.requests(); !slices.Equal(log, want) {
				t.Errorf("requests = %q, want %q", log, want)
			}
		})
	}
}

// TestHTTPLegacyGETBeforeFirstList: without a consumer at connect, the GET
// stream opens before the first list request of a kind whose listChanged
// the server declares, and has answered before that request is sent: a
// list_changed the server sends right after answering the listing (the
// client's tool registry, which decides replay safety, holds that listing
// now) arrives. Later list requests of any kind send no second GET.
func TestHTTPLegacyGETBeforeFirstList(t *testing.T) {
	for _, tc := range []struct {
		method, changed string
		caps            map[string]any
	}{
		{protocol.MethodToolsList, protocol.NotificationToolsListChanged, map[string]any{"tools": map[string]any{"listChanged": true}}},
		{protocol.MethodPromptsList, protocol.NotificationPromptsListChanged, map[string]any{"prompts": map[string]any{"listChanged": true}}},
		{protocol.MethodResourcesList, protocol.NotificationResourcesListChanged, map[string]any{"resources": map[string]any{"listChanged": true}}},
		{protocol.MethodResourcesTemplateList, protocol.NotificationResourcesListChanged, map[string]any{"resources": map[string]any{"listChanged": true}}},
	} {
		t.Run(tc.method, func(t *testing.T) {
			g := &getServer{caps: tc.caps, after: map[string]*jsonrpc.Request{tc.method: {Method: tc.changed}}}
			s, got := connectGET(t, g, Config{})
			if n := countGET(g.requests()); n != 0 {
				t.Fatalf("GET sent at connect (%d)", n)
			}
			for range 2 {
				if _, err := s.Call(t.Context(), tc.method, nil, nil); err != nil {
					t.Fatalf("%s: %v", tc.method, err)
				}
				wantNotification(t, got, tc.changed)
			}
			// The GET may overtake notifications/initialized, whose
			// answer Connect does not wait for; the list waits for both.
			want := []string{"server/discover", "initialize", "GET", "notifications/initialized", tc.method, tc.method}
			log := g.requests()
			if len(log) == len(want) {
				slices.Sort(log[2:4])
			}
			if !slices.Equal(log, want) {
				t.Errorf("requests = %q, want %q", log, want)
			}
		})
	}
}

// TestHTTPLegacyWantServerMessages: WantServerMessages opens a deferred
// GET stream and returns once it answered (what the server sends then
// arrives); a second call sends nothing.
func TestHTTPLegacyWantServerMessages(t *testing.T) {
	g := &getServer{caps: map[string]any{"tools": map[string]any{"listChanged": true}}}
	s, got := connectGET(t, g, Config{})
	if n := countGET(g.requests()); n != 0 {
		t.Fatalf("GET sent at connect (%d)", n)
	}
	s.WantServerMessages(t.Context())
	s.WantServerMessages(t.Context())
	g.push(&jsonrpc.Request{Method: protocol.NotificationToolsListChanged})
	wantNotification(t, got, protocol.NotificationToolsListChanged)
	want := []string{"server/discover", "initialize", "GET", "notifications/initialized"}
	log := g.waitRequests(len(want))
	if len(log) == len(want) {
		slices.Sort(log[2:])
	}
	if !slices.Equal(log, want) {
		t.Errorf("requests = %q, want %q", log, want)
	}
}

// TestHTTPLegacyGETOnDemand: without capabilities for it, the GET stream
// opens before the first resources/subscribe or logging/setLevel (once),
// so that what the server sends on it after answering arrives; a later
// such request sends no second GET.
func TestHTTPLegacyGETOnDemand(t *testing.T) {
	for _, tc := range []struct {
		method string
		params any
		after  string
	}{
		{protocol.MethodResourcesSubscribe, map[string]any{"uri": "file:///a"}, protocol.NotificationResourcesUpdated},
		{protocol.MethodLoggingSetLevel, map[string]any{"level": "debug"}, protocol.NotificationMessage},
	} {
		t.Run(tc.method, func(t *testing.T) {
			g := &getServer{caps: map[string]any{}, after: map[string]*jsonrpc.Request{
				tc.method: {Method: tc.after, Params: json.RawMessage(`{"uri":"file:///a","level":"info","data":"x"}`)},
			}}
			s, got := connectGET(t, g, Config{})
			if n := countGET(g.requests()); n != 0 {
				t.Fatalf("GET sent at connect (%d)", n)
			}
			if _, err := s.Call(t.Context(), protocol.MethodToolsList, nil, nil); err != nil {
				t.Fatalf("tools/list: %v", err)
			}
			if n := countGET(g.requests()); n != 0 {
				t.Fatalf("GET sent before %s (%d)", tc.method, n)
			}
			if _, err := s.Call(t.Context(), tc.method, tc.params, nil); err != nil {
				t.Fatalf("%s: %v", tc.method, err)
			}
			wantNotification(t, got, tc.after)
			if _, err := s.Call(t.Context(), tc.method, tc.params, nil); err != nil {
				t.Fatalf("%s again: %v", tc.method, err)
			}
			wantNotification(t, got, tc.after)
			want := []string{"server/discover", "initialize", "notifications/initialized", "tools/list", "GET", tc.method, tc.method}
			if log := g.requests(); !slices.Equal(log, want) {
				t.Errorf("requests = %q, want %q", log, want)
			}
		})
	}
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
	s := connected(t, tr, Config{Mode: ModeLegacy, Handler: detected(el)})
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
	checkDiff(t, "elicitation answer", want, got.Elicited)
}
