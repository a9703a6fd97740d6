package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// Credentials of every kind the transports send: a static header, the
// bearer token, what the auth hook (HeaderFunc) adds, a cookie.
const (
	secretStatic = "static-api-key"
	secretToken  = "bearer-token"
	secretHook   = "hook-credential"
)

// sensitive lists the headers that carry a credential in these tests.
var sensitive = []string{"Authorization", "X-Api-Key", "X-Hook-Key", "Dpop", "Cookie", "Mcp-Session-Id"}

// headerLog records the headers one origin saw.
type headerLog struct {
	mu   sync.Mutex
	seen []http.Header
}

func (l *headerLog) add(h http.Header) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, h.Clone())
}

func (l *headerLog) all() []http.Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]http.Header(nil), l.seen...)
}

// checkNoCredentials fails when any header another origin saw carries a
// credential; it requires that the origin was reached at least once when
// reached is true.
func checkNoCredentials(t *testing.T, origin string, l *headerLog, reached bool) {
	t.Helper()
	seen := l.all()
	if reached && len(seen) == 0 {
		t.Errorf("%s: no request arrived; the test proves nothing", origin)
	}
	for _, h := range seen {
		for _, k := range sensitive {
			if v := h.Values(k); len(v) > 0 {
				t.Errorf("%s saw %s: %q", origin, k, v)
			}
		}
		for k, vs := range h {
			for _, v := range vs {
				for _, s := range []string{secretStatic, secretToken, secretHook} {
					if strings.Contains(v, s) {
						t.Errorf("%s saw the credential %q in %s", origin, s, k)
					}
				}
			}
		}
	}
}

// credentialed fills the credential fields of an HTTP transport.
func credentials() (http.Header, transport.TokenSource, func(context.Context, *http.Request) error) {
	h := http.Header{"X-Api-Key": {secretStatic}, "Cookie": {"session=" + secretStatic}, "X-Trace": {"kept"}}
	ts := transport.TokenSourceFunc(func(context.Context) (string, error) { return secretToken, nil })
	hook := func(_ context.Context, req *http.Request) error {
		req.Header.Set("X-Hook-Key", secretHook)
		req.Header.Set("DPoP", secretHook)
		return nil
	}
	return h, ts, hook
}

// answerJSON answers a JSON-RPC request in the body with an empty result.
func answerJSON(w http.ResponseWriter, r *http.Request) {
	var b [4096]byte
	n, _ := r.Body.Read(b[:])
	m, err := jsonrpc.DecodeMessage(b[:n])
	req, ok := m.(*jsonrpc.Request)
	if err != nil || !ok {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	resp, _ := jsonrpc.NewResponse(req.ID, nil)
	out, _ := jsonrpc.EncodeMessage(resp)
	w.Header().Set("Content-Type", "application/json")
	w.Write(out)
}

// origin is the origin of an httptest server, as RedirectError names it.
func origin(srv *httptest.Server) string { return srv.URL }

// checkRedirectError fails unless err is a *RedirectError from → to that
// matches ErrCrossOriginRedirect.
func checkRedirectError(t *testing.T, err error, from, to string) {
	t.Helper()
	re, ok := errors.AsType[*transport.RedirectError](err)
	if !ok {
		t.Fatalf("error = %v (%T); want a *transport.RedirectError", err, err)
	}
	if re.From != from || re.To != to {
		t.Errorf("RedirectError{From: %q, To: %q}; want %q → %q", re.From, re.To, from, to)
	}
	if !errors.Is(err, transport.ErrCrossOriginRedirect) {
		t.Errorf("error %v does not match ErrCrossOriginRedirect", err)
	}
	if !strings.Contains(err.Error(), from) || !strings.Contains(err.Error(), to) {
		t.Errorf("error %q does not name both origins", err)
	}
}

// redirectServers starts the origin A, whose /mcp redirects within A to
// /moved, which redirects to B's /mcp (another origin: another port); B
// answers JSON-RPC requests. Each origin logs the headers it saw.
func redirectServers(t *testing.T, same, other *headerLog, bodies *[]int) (a, b *httptest.Server) {
	var mu sync.Mutex
	b = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r.Header)
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		*bodies = append(*bodies, len(body))
		mu.Unlock()
		http.Error(w, "no body", http.StatusBadRequest)
	}))
	t.Cleanup(b.Close)
	a = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			same.add(r.Header)
			http.Redirect(w, r, b.URL+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(a.Close)
	return a, b
}

// TestStreamableHTTPRedirectSameOriginOnly: by default a POST follows a
// redirect within its origin, with its credentials, and fails with a
// RedirectError naming both origins at a redirect to another origin,
// which sees no request at all; in both eras.
func TestStreamableHTTPRedirectSameOriginOnly(t *testing.T) {
	var same, other headerLog
	var bodies []int
	srvA, srvB := redirectServers(t, &same, &other, &bodies)
	h, ts, hook := credentials()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		tr := &transport.StreamableHTTP{URL: srvA.URL + "/mcp", Header: h, TokenSource: ts, HeaderFunc: hook, DisableGETStream: true}
		c := connect(t, tr)
		c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
		err := c.Write(t.Context(), request(t, 1, "tools/list", map[string]any{}))
		checkRedirectError(t, err, origin(srvA), origin(srvB))
		c.Close()
	}
	if n := len(other.all()); n != 0 {
		t.Errorf("another origin saw %d requests, want none", n)
	}
	if len(same.all()) != 2 {
		t.Errorf("the same-origin hop saw %d requests, want 2", len(same.all()))
	}
	for _, hs := range same.all() {
		if hs.Get("Authorization") != "Bearer "+secretToken || hs.Get("X-Api-Key") != secretStatic || hs.Get("X-Hook-Key") != secretHook {
			t.Errorf("the same-origin hop lost credentials: %v", hs)
		}
	}
}

// TestStreamableHTTPCrossOriginRedirectsStripped: with
// CrossOriginRedirects a POST redirected to another origin arrives there
// without its body, credentials or custom headers (static, token, hook,
// cookie, session id), with the protocol headers; in both eras.
func TestStreamableHTTPCrossOriginRedirectsStripped(t *testing.T) {
	var same, other headerLog
	var bodies []int
	srvA, _ := redirectServers(t, &same, &other, &bodies)
	h, ts, hook := credentials()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		tr := &transport.StreamableHTTP{URL: srvA.URL + "/mcp", Header: h, TokenSource: ts, HeaderFunc: hook, DisableGETStream: true, CrossOriginRedirects: true}
		c := connect(t, tr)
		c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
		err := c.Write(t.Context(), request(t, 1, "tools/list", map[string]any{}))
		if _, ok := errors.AsType[*transport.HTTPError](err); !ok {
			t.Errorf("%s: Write() = %v; want the other origin's HTTPError", version, err)
		}
		c.Close()
	}
	checkNoCredentials(t, "another origin", &other, true)
	for _, hs := range other.all() {
		if hs.Get("X-Trace") != "" || hs.Get("Content-Type") != "" {
			t.Errorf("another origin saw a custom header or a Content-Type: %v", hs)
		}
		if hs.Get("Mcp-Protocol-Version") == "" {
			t.Errorf("another origin lost MCP-Protocol-Version: %v", hs)
		}
	}
	for i, n := range bodies {
		if n != 0 {
			t.Errorf("request %d reached another origin with a body of %d bytes", i, n)
		}
	}
}

// TestHTTPRedirectNeverDowngrades: a redirect from https to http is not
// followed, with or without CrossOriginRedirects, on Streamable HTTP,
// HTTP+SSE and the WebSocket handshake (wss to ws).
func TestHTTPRedirectNeverDowngrades(t *testing.T) {
	var plain headerLog
	srvB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plain.add(r.Header)
		answerJSON(w, r)
	}))
	defer srvB.Close()
	srvA := httptest.NewTLSServer(http.RedirectHandler(srvB.URL+"/mcp", http.StatusTemporaryRedirect))
	defer srvA.Close()
	for _, cross := range []bool{false, true} {
		tr := &transport.StreamableHTTP{URL: srvA.URL + "/mcp", HTTPClient: srvA.Client(), CrossOriginRedirects: cross}
		c := connect(t, tr)
		err := c.Write(t.Context(), request(t, 1, "tools/list", map[string]any{}))
		checkRedirectError(t, err, origin(srvA), origin(srvB))
		if cross && !strings.Contains(err.Error(), "https to http") {
			t.Errorf("error %q does not say it is a downgrade", err)
		}
		c.Close()
		sse := &transport.SSE{URL: srvA.URL + "/sse", HTTPClient: srvA.Client(), CrossOriginRedirects: cross}
		_, err = sse.Connect(t.Context())
		checkRedirectError(t, err, origin(srvA), origin(srvB))
		ws := &transport.WebSocket{URL: "wss" + strings.TrimPrefix(srvA.URL, "https") + "/ws", HTTPClient: srvA.Client(), CrossOriginRedirects: cross}
		_, err = ws.Connect(t.Context())
		checkRedirectError(t, err, origin(srvA), origin(srvB))
	}
	if n := len(plain.all()); n != 0 {
		t.Errorf("the http origin saw %d requests, want none", n)
	}
}

// TestSSERedirect: the GET of the legacy HTTP+SSE transport is not
// redirected to another origin by default (a RedirectError); with
// CrossOriginRedirects it is, without any credential or custom header.
func TestSSERedirect(t *testing.T) {
	var other headerLog
	srvB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r.Header)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srvB.Close()
	srvA := httptest.NewServer(http.RedirectHandler(srvB.URL+"/sse", http.StatusFound))
	defer srvA.Close()
	h, ts, hook := credentials()
	tr := &transport.SSE{URL: srvA.URL + "/sse", Header: h, TokenSource: ts, HeaderFunc: hook}
	_, err := tr.Connect(t.Context())
	checkRedirectError(t, err, origin(srvA), origin(srvB))
	if n := len(other.all()); n != 0 {
		t.Fatalf("another origin saw %d requests by default, want none", n)
	}
	tr.CrossOriginRedirects = true
	if c, err := tr.Connect(t.Context()); err == nil {
		c.Close()
		t.Fatal("Connect() succeeded against a 404")
	}
	checkNoCredentials(t, "another origin", &other, true)
	for _, hs := range other.all() {
		if hs.Get("X-Trace") != "" {
			t.Errorf("another origin saw the custom header X-Trace: %v", hs)
		}
	}
}

// bearerEveryHop is an http.RoundTripper that adds credentials to every
// request it sends, as an auth layer wrapped around the client does.
type bearerEveryHop struct{}

func (bearerEveryHop) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+secretToken)
	r.Header.Set("X-Hook-Key", secretHook)
	return http.DefaultTransport.RoundTrip(r)
}

// TestWebSocketRedirectKeepsCredentialsHome: a handshake redirected to
// another origin (another port) is not followed, so neither the static
// Authorization header nor what the client's transport adds on every hop
// reaches it; a same-origin redirect is followed.
func TestWebSocketRedirectKeepsCredentialsHome(t *testing.T) {
	var other headerLog
	srvB := wsServer(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) {
		other.add(r.Header)
		wsEcho(ctx, ws, r)
	})
	var home headerLog
	srvA := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/away":
			http.Redirect(w, r, srvB.URL+"/ws", http.StatusTemporaryRedirect)
		case "/moved":
			http.Redirect(w, r, "/ws", http.StatusTemporaryRedirect)
		default:
			home.add(r.Header)
			ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
			if err != nil {
				return
			}
			defer ws.CloseNow()
			wsEcho(r.Context(), ws, r)
		}
	}))
	defer srvA.Close()
	wsURL := "ws" + strings.TrimPrefix(srvA.URL, "http")
	for _, hc := range []*http.Client{nil, {Transport: bearerEveryHop{}}} {
		tr := &transport.WebSocket{URL: wsURL + "/away", Header: http.Header{"Authorization": {"Bearer " + secretToken}, "X-Api-Key": {secretStatic}}, HTTPClient: hc}
		c, err := tr.Connect(t.Context())
		if err == nil {
			c.Close()
			t.Fatal("Connect() followed a redirect to another origin")
		}
		checkRedirectError(t, err, origin(srvA), srvB.URL)
		tr.URL = wsURL + "/moved"
		c = connect(t, tr)
		if r := call(t, c, 1, "echo", map[string]int{"n": 1}); r.Error != nil {
			t.Fatalf("echo after a same-origin redirect = %v", r.Error)
		}
		c.Close()
	}
	checkNoCredentials(t, "another origin", &other, false)
	if len(other.all()) != 0 {
		t.Errorf("another origin saw %d handshakes, want none", len(other.all()))
	}
	for _, hs := range home.all() {
		if hs.Get("Authorization") != "Bearer "+secretToken {
			t.Errorf("the same-origin handshake lost Authorization: %v", hs)
		}
	}
}

// TestWebSocketCrossOriginRedirectsStripped: with CrossOriginRedirects a
// handshake redirected to another origin is followed there without
// Header's headers; the connection then works.
func TestWebSocketCrossOriginRedirectsStripped(t *testing.T) {
	var other headerLog
	srvB := wsServer(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) {
		other.add(r.Header)
		wsEcho(ctx, ws, r)
	})
	srvA := httptest.NewServer(http.RedirectHandler(srvB.URL+"/ws", http.StatusTemporaryRedirect))
	defer srvA.Close()
	tr := &transport.WebSocket{URL: "ws" + strings.TrimPrefix(srvA.URL, "http") + "/away", CrossOriginRedirects: true,
		Header: http.Header{"Authorization": {"Bearer " + secretToken}, "X-Api-Key": {secretStatic}, "X-Trace": {"custom"}}}
	c := connect(t, tr)
	if r := call(t, c, 1, "echo", map[string]int{"n": 1}); r.Error != nil {
		t.Fatalf("echo after a cross-origin redirect = %v", r.Error)
	}
	c.Close()
	checkNoCredentials(t, "another origin", &other, true)
	for _, hs := range other.all() {
		if hs.Get("X-Trace") != "" {
			t.Errorf("another origin saw the custom header X-Trace: %v", hs)
		}
	}
}
