package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testrecord"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

func TestMain(m *testing.M) {
	if mode := os.Getenv(stdioServerEnv); mode != "" {
		// The test binary re-run as a stdio MCP server (stdioServer).
		os.Exit(runStdioServer(mode))
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}

const (
	stdioServerEnv = "SESSION_TEST_STDIO_SERVER"
	stdioStateEnv  = "SESSION_TEST_STDIO_STATE"
)

// runStdioServer is a legacy stdio MCP server that behaves like the rmcp
// servers of go-sdk #1177: it exits when the first message is not
// initialize. The tool "crash" makes it exit once (a state file remembers
// it crashed), as a server process dying mid-call.
func runStdioServer(mode string) int {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(nil, 1<<20)
	out := bufio.NewWriter(os.Stdout)
	send := func(m jsonrpc.Message) {
		b, _ := jsonrpc.EncodeMessage(m)
		out.Write(append(b, '\n'))
		out.Flush()
	}
	initialized := false
	for in.Scan() {
		m, err := jsonrpc.DecodeMessage(in.Bytes())
		if err != nil {
			continue
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		switch req.Method {
		case protocol.MethodInitialize:
			initialized = true
			var ip protocol.InitializeParams
			json.Unmarshal(req.Params, &ip)
			resp, _ := jsonrpc.NewResponse(req.ID, initResult(ip.ProtocolVersion))
			send(resp)
		case protocol.MethodToolsCall:
			state := os.Getenv(stdioStateEnv)
			if _, err := os.Stat(state); err != nil {
				os.WriteFile(state, []byte("crashed"), 0o600)
				return 3
			}
			resp, _ := jsonrpc.NewResponse(req.ID, echoResult(req.Params, false))
			send(resp)
		default:
			if !initialized {
				os.Stderr.WriteString("ExpectedInitializeRequest\n")
				return 1
			}
			resp, _ := jsonrpc.NewResponse(req.ID, echoResult(req.Params, false))
			send(resp)
		}
	}
	return 0
}

// stdioServer is a stdio transport that runs the test binary as
// runStdioServer, a real server process.
func stdioServer(t *testing.T) *transport.Stdio {
	exe, err := os.Executable()
	if err != nil {
		t.Skip("no test executable:", err)
	}
	return &transport.Stdio{
		Path:           exe,
		Env:            []string{stdioServerEnv + "=legacy", stdioStateEnv + "=" + filepath.Join(stateDir(t), "state")},
		TerminateDelay: 100 * time.Millisecond,
		KillDelay:      100 * time.Millisecond,
	}
}

// peer is a tiny scripted MCP server speaking newline-delimited JSON on the
// server end of a transport.Pipe. handle runs on the peer's read
// goroutine for every message the client sends; it must not block for
// long (spawn with p.goFn for delayed answers).
type peer struct {
	rw     io.ReadWriteCloser
	br     *bufio.Reader
	wlock  chan struct{}
	handle func(p *peer, m jsonrpc.Message)

	mu   sync.Mutex
	got  []jsonrpc.Message
	wg   sync.WaitGroup
	done chan struct{}
}

func startPeer(rw io.ReadWriteCloser, handle func(p *peer, m jsonrpc.Message)) *peer {
	p := &peer{rw: rw, br: bufio.NewReader(rw), wlock: make(chan struct{}, 1), handle: handle, done: make(chan struct{})}
	go p.run()
	return p
}

func (p *peer) run() {
	defer close(p.done)
	defer p.wg.Wait()
	defer p.rw.Close()
	for {
		line, err := p.br.ReadBytes('\n')
		if err != nil {
			return
		}
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			continue
		}
		p.mu.Lock()
		p.got = append(p.got, m)
		p.mu.Unlock()
		if p.handle != nil {
			p.handle(p, m)
		}
	}
}

// goFn runs f on a goroutine joined when the peer ends.
func (p *peer) goFn(f func()) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		f()
	}()
}

func (p *peer) send(m jsonrpc.Message) {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		panic(err)
	}
	b = append(b, '\n')
	p.wlock <- struct{}{}
	p.rw.Write(b)
	<-p.wlock
}

func (p *peer) reply(req *jsonrpc.Request, result any) {
	resp, err := jsonrpc.NewResponse(req.ID, result)
	if err != nil {
		panic(err)
	}
	p.send(resp)
}

func (p *peer) replyErr(req *jsonrpc.Request, code int64, msg string, data any) {
	e := jsonrpc.NewError(code, msg)
	if data != nil {
		e = e.WithData(data)
	}
	p.send(jsonrpc.NewErrorResponse(req.ID, e))
}

func (p *peer) notify(method string, params any) {
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		panic(err)
	}
	p.send(n)
}

// kill closes the server end, as a process that exits.
func (p *peer) kill() { p.rw.Close() }

// messages returns what the client sent so far.
func (p *peer) messages() []jsonrpc.Message {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]jsonrpc.Message(nil), p.got...)
}

// methods returns the methods of the requests and notifications the client
// sent so far, in order.
func (p *peer) methods() []string {
	var out []string
	for _, m := range p.messages() {
		if r, ok := m.(*jsonrpc.Request); ok {
			out = append(out, r.Method)
		}
	}
	return out
}

// requests returns the client requests (not notifications) with method.
func (p *peer) requests(method string) []*jsonrpc.Request {
	var out []*jsonrpc.Request
	for _, m := range p.messages() {
		if r, ok := m.(*jsonrpc.Request); ok && r.Method == method && !r.IsNotification() {
			out = append(out, r)
		}
	}
	return out
}

// scripted is a transport whose every Connect makes a fresh in-memory
// pipe with a new peer: handlers[i] serves the i-th connection (the last
// one repeats). kind, when set, overrides the connection's Kind.
type scripted struct {
	handlers []func(p *peer, m jsonrpc.Message)
	kind     string
	netErr   bool

	mu    sync.Mutex
	peers []*peer
}

func newScripted(handlers ...func(p *peer, m jsonrpc.Message)) *scripted {
	return &scripted{handlers: handlers}
}

type kindConn struct {
	transport.Conn
	kind   string
	netErr bool // report read errors as *transport.NetworkError, as the WebSocket transport does
}

func (c kindConn) Kind() string { return c.kind }

func (c kindConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Conn.Read(ctx)
	if err != nil && c.netErr {
		err = &transport.NetworkError{Op: "read", URL: "ws://fake", Err: err}
	}
	return m, err
}

func (s *scripted) Connect(ctx context.Context) (transport.Conn, error) {
	pipe, server := transport.NewPipe()
	conn, err := pipe.Connect(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	h := s.handlers[min(len(s.peers), len(s.handlers)-1)]
	p := startPeer(server, h)
	s.peers = append(s.peers, p)
	s.mu.Unlock()
	if s.kind != "" {
		return kindConn{conn, s.kind, s.netErr}, nil
	}
	return conn, nil
}

func (s *scripted) peer(i int) *peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i >= len(s.peers) {
		return nil
	}
	return s.peers[i]
}

// wait waits until every peer has ended (the client closed its end).
func (s *scripted) wait() {
	s.mu.Lock()
	peers := append([]*peer(nil), s.peers...)
	s.mu.Unlock()
	for _, p := range peers {
		<-p.done
	}
}

func (s *scripted) connects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.peers)
}

// connect connects over tr with cfg inside a synctest bubble and returns
// the session (closed by cleanup) or the error.
func connect(t *testing.T, tr transport.Transport, cfg Config) (*Session, error) {
	t.Helper()
	s, err := Connect(t.Context(), tr, cfg)
	t.Cleanup(func() {
		if s != nil {
			s.Close()
		}
		if sc, ok := tr.(*scripted); ok {
			sc.wait()
		}
	})
	return s, err
}

// detected is handler.Detect(h), for Config.Handler.
func detected(h any) *handler.Set {
	set := handler.Detect(h)
	return &set
}

// connected is connect for a connect that must succeed: it fails the test
// otherwise.
func connected(t *testing.T, tr transport.Transport, cfg Config) *Session {
	t.Helper()
	s, err := connect(t, tr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// discoverResult is a valid DiscoverResult for 2026-07-28.
var discoverResult = map[string]any{
	"resultType":        "complete",
	"supportedVersions": []string{protocol.Version20260728},
	"capabilities":      map[string]any{"tools": map[string]any{}},
	"instructions":      "be nice",
	"ttlMs":             1000,
	"cacheScope":        "public",
	"_meta":             map[string]any{protocol.MetaServerInfo: map[string]any{"name": "fake", "version": "1"}},
}

func initResult(version string) map[string]any {
	return map[string]any{
		"protocolVersion": version,
		"capabilities":    map[string]any{"tools": map[string]any{"listChanged": true}},
		"serverInfo":      map[string]any{"name": "legacy-fake", "version": "2"},
		"instructions":    "legacy instructions",
	}
}

// reqHandler adapts a request-only handler.
func reqHandler(f func(p *peer, req *jsonrpc.Request)) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && !r.IsNotification() {
			f(p, r)
		}
	}
}

// server behaviours, composable.

// modernServer answers server/discover and echoes every other request's
// params as its result (with resultType complete).
var modernServer = reqHandler(func(p *peer, req *jsonrpc.Request) {
	switch req.Method {
	case protocol.MethodDiscover:
		p.reply(req, discoverResult)
	case protocol.MethodInitialize:
		p.replyErr(req, jsonrpc.CodeUnsupportedProtocolVersion, "modern only", map[string]any{"supported": []string{protocol.Version20260728}})
	default:
		p.reply(req, echoResult(req.Params, true))
	}
})

// legacyServer answers discover with -32601 and initialize with the
// requested version.
var legacyServer = reqHandler(func(p *peer, req *jsonrpc.Request) {
	switch req.Method {
	case protocol.MethodDiscover:
		p.replyErr(req, jsonrpc.CodeMethodNotFound, "method not found", nil)
	case protocol.MethodInitialize:
		var ip protocol.InitializeParams
		json.Unmarshal(req.Params, &ip)
		p.reply(req, initResult(ip.ProtocolVersion))
	default:
		p.reply(req, echoResult(req.Params, false))
	}
})

func echoResult(params json.RawMessage, modern bool) json.RawMessage {
	if len(params) == 0 {
		params = json.RawMessage("null")
	}
	if modern {
		return json.RawMessage(`{"resultType":"complete","echo":` + string(params) + `}`)
	}
	return json.RawMessage(`{"echo":` + string(params) + `}`)
}

// toolCallServer answers the handshake of mode's era (legacyServer for
// ModeLegacy, modernServer otherwise) and hands every tools/call, with the
// progress token it must carry (an error when it does not), to serve.
func toolCallServer(t testing.TB, mode Mode, serve func(p *peer, r *jsonrpc.Request, tok json.RawMessage)) func(p *peer, m jsonrpc.Message) {
	return reqHandler(func(p *peer, r *jsonrpc.Request) {
		if r.Method != "tools/call" {
			if mode == ModeLegacy {
				legacyServer(p, r)
			} else {
				modernServer(p, r)
			}
			return
		}
		tok := metaOf(t, r.Params)[protocol.MetaProgressToken]
		if len(tok) == 0 {
			t.Errorf("no progressToken in %s", r.Params)
		}
		serve(p, r, tok)
	})
}

// listenAll connects a session over tr with cfg and opens a listen stream
// for every notification, failing the test when either step fails.
func listenAll(t *testing.T, tr transport.Transport, cfg Config) (*Session, *Stream) {
	t.Helper()
	s := connected(t, tr, cfg)
	st, err := s.Listen(t.Context(), map[string]any{"notifications": map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	return s, st
}

// record is a list that goroutines add to under its lock (the shared
// testrecord.Record, under the names this package's tests use).
type record[T any] struct{ testrecord.Record[T] }

func (r *record[T]) add(v T) { r.Add(v) }

// all returns a copy of what was added so far.
func (r *record[T]) all() []T { return r.All() }

// tally counts by key what goroutines report under its lock.
type tally[K comparable] struct {
	mu sync.Mutex
	n  map[K]int
}

func (c *tally[K]) add(k K, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[K]int)
	}
	c.n[k] += n
}

func (c *tally[K]) get(k K) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[k]
}

// all returns a copy of the counts so far.
func (c *tally[K]) all() map[K]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// legacySession connects a session pinned to the legacy era to a
// legacyServer, failing the test when it cannot.
func legacySession(t *testing.T) (*scripted, *Session) {
	t.Helper()
	tr := newScripted(legacyServer)
	s := connected(t, tr, Config{Mode: ModeLegacy})
	return tr, s
}

// metaOf decodes params._meta of a client request.
func metaOf(t testing.TB, params json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("decoding params %s: %v", params, err)
	}
	return p.Meta
}

// member returns the raw bytes of a top-level member of params, or nil.
func member(params json.RawMessage, key string) []byte {
	s, e, found, err := topLevelMember(params, key)
	if err != nil || !found {
		return nil
	}
	return params[s:e]
}

// Handler functions that succeed, for server requests and MRTR input
// requests: acceptAll accepts every elicitation, sampleOK answers "hi",
// rootsOK lists one root; allHandlers serves all three.

func acceptAll(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"ok": true}}, nil
}

func sampleOK(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: json.RawMessage(`{"type":"text","text":"hi"}`), Model: "m"}, nil
}

func rootsOK(ctx context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///r", Name: "r"}}, nil
}

var allHandlers = handler.Funcs{Elicit: acceptAll, CreateMessage: sampleOK, ListRoots: rootsOK}

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

// Scripted Streamable HTTP servers.

// httpScript is a scripted Streamable HTTP server: serve answers each
// POSTed JSON-RPC request; notifications and responses get 202.
type httpScript struct {
	mu      sync.Mutex
	methods []string
	headers []http.Header
	serve   func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)
}

func (h *httpScript) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m, ok := decodePOST(w, r)
	if !ok {
		return
	}
	req, ok := m.(*jsonrpc.Request)
	if ok {
		h.record(req, r)
	}
	if !ok || req.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.serve(w, r, req)
}

// record notes that req was posted with r's headers.
func (h *httpScript) record(req *jsonrpc.Request, r *http.Request) {
	h.mu.Lock()
	h.methods = append(h.methods, req.Method)
	h.headers = append(h.headers, r.Header.Clone())
	h.mu.Unlock()
}

func (h *httpScript) sent() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.methods...)
}

// decodePosted decodes the JSON-RPC message a request's body holds; when
// it holds none it answers 400 and returns false.
func decodePosted(w http.ResponseWriter, r *http.Request) (jsonrpc.Message, bool) {
	body, _ := io.ReadAll(r.Body)
	m, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return nil, false
	}
	return m, true
}

// decodePOST is decodePosted for a server without a GET stream: a request
// of another method gets 405 and false.
func decodePOST(w http.ResponseWriter, r *http.Request) (jsonrpc.Message, bool) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return nil, false
	}
	return decodePosted(w, r)
}

// toolCallScript is an httpScript that serves tools/call with tool and
// every other request with other (serveLegacyHTTP, serveModernHTTP).
func toolCallScript(other func(w http.ResponseWriter, req *jsonrpc.Request), tool func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request)) *httpScript {
	return &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		if req.Method != protocol.MethodToolsCall {
			other(w, req)
			return
		}
		tool(w, r, req)
	}}
}

func writeResult(w http.ResponseWriter, req *jsonrpc.Request, result any) {
	resp, _ := jsonrpc.NewResponse(req.ID, result)
	b, _ := jsonrpc.EncodeMessage(resp)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func writeRPCError(w http.ResponseWriter, status int, req *jsonrpc.Request, code int64, msg string) {
	b, _ := jsonrpc.EncodeMessage(jsonrpc.NewErrorResponse(req.ID, jsonrpc.NewError(code, msg)))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func serveLegacyHTTP(w http.ResponseWriter, req *jsonrpc.Request) {
	switch req.Method {
	case protocol.MethodInitialize:
		w.Header().Set(protocol.HeaderSessionID, "sess-1")
		var ip protocol.InitializeParams
		json.Unmarshal(req.Params, &ip)
		writeResult(w, req, initResult(ip.ProtocolVersion))
	default:
		writeResult(w, req, echoResult(req.Params, false))
	}
}

func serveModernHTTP(w http.ResponseWriter, req *jsonrpc.Request) {
	if req.Method == protocol.MethodDiscover {
		writeResult(w, req, discoverResult)
		return
	}
	writeResult(w, req, echoResult(req.Params, true))
}

func httpConnect(t *testing.T, h http.Handler, cfg Config) (*Session, *transport.StreamableHTTP, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}
	if cfg.Retry == (RetryPolicy{}) {
		cfg.Retry = RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}
	}
	s, err := Connect(t.Context(), tr, cfg)
	if err == nil {
		t.Cleanup(func() { s.Close() })
	}
	return s, tr, err
}

// httpSession is httpConnect for a connect that must succeed: it fails the
// test otherwise.
func httpSession(t *testing.T, h http.Handler, cfg Config) *Session {
	t.Helper()
	s, _, err := httpConnect(t, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// authServer serves with serve behind a bearer-token check: a request or
// notification whose method refuse accepts and whose Authorization is not
// "Bearer "+good is answered with status and a WWW-Authenticate challenge.
// h records the method of every message posted, refused ones included.
type authServer struct {
	h      *httpScript
	good   atomic.Value // string
	status int
	refuse func(method string) bool
}

func (a *authServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		m, _ := jsonrpc.DecodeMessage(body)
		if req, ok := m.(*jsonrpc.Request); ok && a.refuse(req.Method) && r.Header.Get("Authorization") != "Bearer "+a.good.Load().(string) {
			a.h.record(req, r)
			if a.status == http.StatusForbidden {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="tools:write"`)
			} else {
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			}
			w.WriteHeader(a.status)
			return
		}
	}
	a.h.ServeHTTP(w, r)
}

func newAuthServer(status int, refuse func(string) bool, serve func(w http.ResponseWriter, req *jsonrpc.Request)) *authServer {
	a := &authServer{status: status, refuse: refuse, h: &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		serve(w, req)
	}}}
	a.good.Store("old")
	return a
}

// authTransport is a Streamable HTTP transport that sends the bearer token
// held in token, "old" at first; the test's Authorize hook replaces it.
func authTransport(t *testing.T, h http.Handler) (tr *transport.StreamableHTTP, token *atomic.Value) {
	token = new(atomic.Value)
	token.Store("old")
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true, HeaderFunc: func(ctx context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token.Load().(string))
		return nil
	}}, token
}

// checkDiff fails the test, naming what was compared, when got differs
// from want.
func checkDiff(t *testing.T, what string, want, got any, opts ...cmp.Option) {
	t.Helper()
	if diff := cmp.Diff(want, got, opts...); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}
