package transport_test

import (
	"context"
	"errors"
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

// TestStreamableHTTPRedirectDropsCredentials: a POST redirected from the
// server's origin to the same origin keeps its credentials; from there to
// another origin (another port) and on to a third, every credential is
// gone on every hop, and the call still completes.
func TestStreamableHTTPRedirectDropsCredentials(t *testing.T) {
	var third, other, same headerLog
	srvC := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		third.add(r.Header)
		answerJSON(w, r)
	}))
	defer srvC.Close()
	srvB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r.Header)
		http.Redirect(w, r, srvC.URL+"/mcp", http.StatusPermanentRedirect)
	}))
	defer srvB.Close()
	srvA := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			same.add(r.Header)
			http.Redirect(w, r, srvB.URL+"/mcp", http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Mcp-Session-Id", "s-"+secretStatic)
		http.Redirect(w, r, "/moved", http.StatusTemporaryRedirect)
	}))
	defer srvA.Close()

	h, ts, hook := credentials()
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		tr := &transport.StreamableHTTP{URL: srvA.URL + "/mcp", Header: h, SensitiveHeaders: []string{"x-api-key"}, TokenSource: ts, HeaderFunc: hook, DisableGETStream: true}
		c := connect(t, tr)
		c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
		for id := int64(1); id <= 2; id++ { // the second POST carries the session id, in the legacy era
			if r := call(t, c, id, "tools/list", map[string]any{}); r.Error != nil {
				t.Fatalf("%s: call through the redirects = %v", version, r.Error)
			}
		}
		c.Close()
	}
	checkNoCredentials(t, "another origin", &other, true)
	checkNoCredentials(t, "a third origin", &third, true)
	// The same-origin hop is the control: credentials go there.
	for _, hs := range same.all() {
		if hs.Get("Authorization") != "Bearer "+secretToken || hs.Get("X-Api-Key") != secretStatic || hs.Get("X-Hook-Key") != secretHook {
			t.Errorf("the same-origin hop lost credentials: %v", hs)
		}
	}
	if len(same.all()) == 0 {
		t.Error("no same-origin hop was seen")
	}
	// The protocol headers and the static headers not marked sensitive
	// do follow.
	for _, hs := range third.all() {
		if hs.Get("Mcp-Protocol-Version") == "" || hs.Get("X-Trace") != "kept" {
			t.Errorf("the other origin lost MCP-Protocol-Version or X-Trace: %v", hs)
		}
	}
}

// TestSSERedirectDropsCredentials: the GET of the legacy HTTP+SSE
// transport redirected to another origin carries no credential.
func TestSSERedirectDropsCredentials(t *testing.T) {
	var other headerLog
	srvB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r.Header)
		http.Error(w, "no", http.StatusNotFound)
	}))
	defer srvB.Close()
	srvA := httptest.NewServer(http.RedirectHandler(srvB.URL+"/sse", http.StatusFound))
	defer srvA.Close()
	h, ts, hook := credentials()
	tr := &transport.SSE{URL: srvA.URL + "/sse", Header: h, SensitiveHeaders: []string{"X-Api-Key"}, TokenSource: ts, HeaderFunc: hook}
	if c, err := tr.Connect(t.Context()); err == nil {
		c.Close()
		t.Fatal("Connect() succeeded against a 404")
	}
	checkNoCredentials(t, "another origin", &other, true)
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
		if !errors.Is(err, transport.ErrCrossOriginRedirect) {
			t.Errorf("Connect() error = %v; want one matching ErrCrossOriginRedirect", err)
		}
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
