package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// httpWatchdog bounds every wait of these tests so that a bug fails the test
// instead of hanging it. It is not a timing assertion.
const httpWatchdog = 20 * time.Second

func httpCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), httpWatchdog)
	t.Cleanup(cancel)
	return ctx
}

func newHTTPServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func httpDial(t *testing.T, tr transport.Transport) transport.Conn {
	t.Helper()
	c, err := tr.Connect(httpCtx(t))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func httpRequest(t testing.TB, id int64, method string, params any) *jsonrpc.Request {
	t.Helper()
	r, err := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func httpNotification(t testing.TB, method string) *jsonrpc.Request {
	t.Helper()
	r, err := jsonrpc.NewNotification(method, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// readRequest decodes the JSON-RPC request a handler received.
func httpReadRequest(t testing.TB, r *http.Request) *jsonrpc.Request {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		t.Errorf("reading body: %v", err)
		return nil
	}
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		t.Errorf("decoding body %q: %v", b, err)
		return nil
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok {
		t.Errorf("body is %T, want a request", m)
		return nil
	}
	return req
}

func httpResult(id jsonrpc.ID, result string) string {
	b, _ := json.Marshal(id)
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`, b, result)
}

func httpWriteJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	io.WriteString(w, body)
}

// writeSSE writes raw event-stream text and flushes.
func httpWriteSSE(w http.ResponseWriter, raw string) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	io.WriteString(w, raw)
	w.(http.Flusher).Flush()
}

func httpMustRead(t *testing.T, c transport.Conn) jsonrpc.Message {
	t.Helper()
	m, err := c.Read(httpCtx(t))
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return m
}

func httpMustResponse(t *testing.T, c transport.Conn, id int64) *jsonrpc.Response {
	t.Helper()
	m := httpMustRead(t, c)
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("Read = %T %+v, want a response", m, m)
	}
	if r.ID != jsonrpc.Int64ID(id) {
		t.Fatalf("response id = %v, want %d", r.ID, id)
	}
	return r
}

func TestHTTPJSONResponseHeaders(t *testing.T) {
	tests := []struct {
		name    string
		version string
		method  string
		params  any
		want    map[string]string // header → value; "" means absent
	}{
		{
			name: "modern tools/call", version: "2026-07-28", method: "tools/call",
			params: map[string]any{"name": "add", "arguments": map[string]any{"a": 1}},
			want: map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add",
				"Accept": "application/json, text/event-stream", "Content-Type": "application/json", "Mcp-Session-Id": ""},
		},
		{
			name: "modern resources/read base64 uri", version: "2026-07-28", method: "resources/read",
			params: map[string]any{"uri": "file:///ü"},
			want:   map[string]string{"Mcp-Method": "resources/read", "Mcp-Name": "=?base64?ZmlsZTovLy/DvA==?="},
		},
		{
			name: "modern tasks/get", version: "2026-07-28", method: "tasks/get",
			params: map[string]any{"taskId": "t-1"},
			want:   map[string]string{"Mcp-Method": "tasks/get", "Mcp-Name": "t-1"},
		},
		{
			name: "modern tools/list", version: "2026-07-28", method: "tools/list",
			want: map[string]string{"Mcp-Method": "tools/list", "Mcp-Name": ""},
		},
		{
			name: "legacy tools/call", version: "2025-11-25", method: "tools/call",
			params: map[string]any{"name": "add"},
			want:   map[string]string{"Mcp-Protocol-Version": "2025-11-25", "Mcp-Method": "", "Mcp-Name": ""},
		},
		{
			name: "initialize", version: "", method: "initialize",
			want: map[string]string{"Mcp-Protocol-Version": "", "Mcp-Method": ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				req := httpReadRequest(t, r)
				seen <- r.Header.Clone()
				httpWriteJSON(w, 200, httpResult(req.ID, `{"ok":true}`))
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(tt.version)
			if err := c.Write(httpCtx(t), httpRequest(t, 7, tt.method, tt.params)); err != nil {
				t.Fatalf("Write: %v", err)
			}
			resp := httpMustResponse(t, c, 7)
			if diff := cmp.Diff(`{"ok":true}`, string(resp.Result)); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			h := <-seen
			got := map[string]string{}
			for k := range tt.want {
				got[k] = h.Get(k)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("headers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHTTPNotificationHeadersAndAccepted(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-06-18"} {
		t.Run(version, func(t *testing.T) {
			seen := make(chan http.Header, 1)
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				httpReadRequest(t, r)
				seen <- r.Header.Clone()
				w.WriteHeader(http.StatusAccepted)
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
			if err := c.Write(httpCtx(t), httpNotification(t, "notifications/initialized")); err != nil {
				t.Fatalf("Write: %v", err)
			}
			h := <-seen
			wantMethod := ""
			if version == "2026-07-28" {
				wantMethod = "notifications/initialized"
			}
			if got := h.Get("Mcp-Method"); got != wantMethod {
				t.Errorf("Mcp-Method = %q, want %q", got, wantMethod)
			}
			if got := h.Get("Mcp-Protocol-Version"); got != version {
				t.Errorf("MCP-Protocol-Version = %q, want %q", got, version)
			}
		})
	}
}

func TestHTTPRequestHeadersFromContext(t *testing.T) {
	seen := make(chan http.Header, 1)
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		seen <- r.Header.Clone()
		httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
	})
	c := httpDial(t, &transport.StreamableHTTP{
		URL:         srv.URL,
		Header:      http.Header{"X-Static": {"s"}},
		TokenSource: transport.TokenSourceFunc(func(context.Context) (string, error) { return "tok", nil }),
		HeaderFunc: func(ctx context.Context, r *http.Request) error {
			r.Header.Set("X-Hook", "h")
			return nil
		},
	})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	ctx := transport.WithRequestHeaders(httpCtx(t), http.Header{"Mcp-Param-Region": {"eu"}})
	if err := c.Write(ctx, httpRequest(t, 1, "tools/call", map[string]any{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	httpMustResponse(t, c, 1)
	h := <-seen
	got := map[string]string{
		"Mcp-Param-Region": h.Get("Mcp-Param-Region"),
		"X-Static":         h.Get("X-Static"),
		"X-Hook":           h.Get("X-Hook"),
		"Authorization":    h.Get("Authorization"),
	}
	want := map[string]string{"Mcp-Param-Region": "eu", "X-Static": "s", "X-Hook": "h", "Authorization": "Bearer tok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
}

func TestHTTPSSEResponse(t *testing.T) {
	const body = ": a comment\r\n\r\n" +
		"id: p0\r\nretry: 10\r\ndata:\r\n\r\n" + // priming event: id and empty data
		"event: message\ndata: {\"jsonrpc\":\"2.0\",\ndata: \"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n" +
		"event: other\ndata: {\"ignored\":true}\n\n" +
		"data: not json\n\n" + // skipped; the stream goes on

		"data: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{\"done\":true}}\r\n\r\n"
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				httpReadRequest(t, r)
				httpWriteSSE(w, body)
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
			if err := c.Write(httpCtx(t), httpRequest(t, 3, "tools/call", map[string]any{"name": "slow"})); err != nil {
				t.Fatal(err)
			}
			n, ok := httpMustRead(t, c).(*jsonrpc.Request)
			if !ok || n.Method != "notifications/progress" || string(n.Params) != `{"progress":1}` {
				t.Fatalf("first message = %+v, want the progress notification", n)
			}
			r := httpMustResponse(t, c, 3)
			if string(r.Result) != `{"done":true}` {
				t.Errorf("result = %s", r.Result)
			}
		})
	}
}

func TestHTTPSSEEventTooLarge(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		httpReadRequest(t, r)
		httpWriteSSE(w, "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"big\":\""+strings.Repeat("x", 4096)+"\"}}\n\n")
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, MaxMessageSize: 1024})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/list", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(httpCtx(t))
	var se *transport.StreamError
	var tl *transport.MessageTooLargeError
	if !errors.As(err, &se) || !errors.As(err, &tl) || tl.Limit != 1024 || se.ID != jsonrpc.Int64ID(1) {
		t.Fatalf("Read error = %v, want a StreamError for id 1 wrapping MessageTooLargeError{1024}", err)
	}
}

func TestHTTPJSONBodyTooLarge(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		httpWriteJSON(w, 200, httpResult(req.ID, `"`+strings.Repeat("y", 4096)+`"`))
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, MaxMessageSize: 1024})
	if err := c.Write(httpCtx(t), httpRequest(t, 2, "tools/list", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(httpCtx(t))
	var tl *transport.MessageTooLargeError
	if !errors.As(err, &tl) || !errors.Is(err, transport.ErrStreamBroken) {
		t.Fatalf("Read error = %v, want a StreamError wrapping MessageTooLargeError", err)
	}
}

func TestHTTPStreamEndsBeforeResponse(t *testing.T) {
	for _, version := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				req := httpReadRequest(t, r)
				if req.Method == "ping" {
					httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
					return
				}
				// A notification, then the stream ends without the response.
				httpWriteSSE(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n")
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
			if err := c.Write(httpCtx(t), httpRequest(t, 5, "tools/call", map[string]any{"name": "x"})); err != nil {
				t.Fatal(err)
			}
			if n, ok := httpMustRead(t, c).(*jsonrpc.Request); !ok || n.Method != "notifications/message" {
				t.Fatalf("first message = %+v, want the notification", n)
			}
			_, err := c.Read(httpCtx(t))
			var se *transport.StreamError
			if !errors.As(err, &se) || se.ID != jsonrpc.Int64ID(5) || !errors.Is(err, transport.ErrStreamBroken) {
				t.Fatalf("Read error = %v, want StreamError{ID: 5}", err)
			}
			// The connection stays usable.
			if err := c.Write(httpCtx(t), httpRequest(t, 6, "ping", nil)); err != nil {
				t.Fatal(err)
			}
			httpMustResponse(t, c, 6)
		})
	}
}

func TestHTTPErrorStatuses(t *testing.T) {
	rpcErr := `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"unsupported","data":{"supported":["2026-07-28"],"requested":"2027-01-01"}}}`
	tests := []struct {
		name   string
		handle func(w http.ResponseWriter)
		want   transport.HTTPError
	}{
		{
			name: "401 with WWW-Authenticate",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`)
				w.WriteHeader(401)
			},
			want: transport.HTTPError{StatusCode: 401, WWWAuthenticate: `Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`, Body: []byte{}},
		},
		{
			name: "403 insufficient scope",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="a b"`)
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(403)
				io.WriteString(w, "forbidden")
			},
			want: transport.HTTPError{StatusCode: 403, ContentType: "text/plain", WWWAuthenticate: `Bearer error="insufficient_scope", scope="a b"`, Body: []byte("forbidden")},
		},
		{
			name: "429 with Retry-After",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "7")
				w.WriteHeader(429)
			},
			want: transport.HTTPError{StatusCode: 429, RetryAfter: 7 * time.Second, Body: []byte{}},
		},
		{
			name:   "500",
			handle: func(w http.ResponseWriter) { w.WriteHeader(500) },
			want:   transport.HTTPError{StatusCode: 500, Body: []byte{}},
		},
		{
			name: "503 with Retry-After",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(503)
			},
			want: transport.HTTPError{StatusCode: 503, RetryAfter: 2 * time.Second, Body: []byte{}},
		},
		{
			name:   "400 with a modern JSON-RPC error",
			handle: func(w http.ResponseWriter) { httpWriteJSON(w, 400, rpcErr) },
			want: transport.HTTPError{StatusCode: 400, ContentType: "application/json", Body: []byte(rpcErr),
				Response: &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: -32022, Message: "unsupported",
					Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2027-01-01"}`)}}},
		},
		{
			name: "400 with the JSON-RPC error as an event stream",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(400)
				io.WriteString(w, "data: "+rpcErr+"\n\n")
			},
			want: transport.HTTPError{StatusCode: 400, ContentType: "text/event-stream", Body: []byte("data: " + rpcErr + "\n\n"),
				Response: &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: -32022, Message: "unsupported",
					Data: json.RawMessage(`{"supported":["2026-07-28"],"requested":"2027-01-01"}`)}}},
		},
		{
			name: "200 text/html",
			handle: func(w http.ResponseWriter) {
				w.Header().Set("Content-Type", "text/html")
				io.WriteString(w, "<html></html>")
			},
			want: transport.HTTPError{StatusCode: 200, ContentType: "text/html", Body: []byte("<html></html>")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				httpReadRequest(t, r)
				tt.handle(w)
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
			err := c.Write(httpCtx(t), httpRequest(t, 1, "server/discover", nil))
			var he *transport.HTTPError
			if !errors.As(err, &he) {
				t.Fatalf("Write error = %v (%T), want *HTTPError", err, err)
			}
			want := tt.want
			want.Method, want.URL = "POST", srv.URL
			if diff := cmp.Diff(&want, he, cmpopts.EquateComparable(jsonrpc.ID{})); diff != "" {
				t.Errorf("HTTPError (-want +got):\n%s", diff)
			}
			if errors.Is(err, transport.ErrSessionExpired) {
				t.Errorf("error matches ErrSessionExpired without a session")
			}
		})
	}
}

func TestHTTPNetworkError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL
	srv.Close() // nothing listens there any more
	c := httpDial(t, &transport.StreamableHTTP{URL: u})
	err := c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil))
	var ne *transport.NetworkError
	if !errors.As(err, &ne) || ne.Op != "POST" {
		t.Fatalf("Write error = %v, want *NetworkError", err)
	}
}

// httpLegacyServer is a small legacy Streamable HTTP server: it hands out a
// session id on initialize, checks it afterwards, answers JSON and records
// what it saw.
type httpLegacyServer struct {
	t       *testing.T
	mu      sync.Mutex
	session string
	expired bool
	posts   []http.Header
	deletes chan http.Header
	get     func(w http.ResponseWriter, r *http.Request)
}

func (s *httpLegacyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.Method {
	case http.MethodDelete:
		s.deletes <- r.Header.Clone()
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet:
		if s.get == nil {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		s.get(w, r)
		return
	}
	b, _ := io.ReadAll(r.Body)
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		s.t.Errorf("decoding %q: %v", b, err)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	req, ok := m.(*jsonrpc.Request)
	if !ok { // a response to a server request
		w.WriteHeader(http.StatusAccepted)
		return
	}
	s.mu.Lock()
	s.posts = append(s.posts, r.Header.Clone())
	expired := s.expired
	s.mu.Unlock()
	if req.Method == "initialize" {
		w.Header().Set("Mcp-Session-Id", s.session)
		httpWriteJSON(w, 200, httpResult(req.ID, `{"protocolVersion":"2025-11-25"}`))
		return
	}
	if expired || r.Header.Get("Mcp-Session-Id") != s.session {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	if req.IsNotification() {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
}

func httpInitialize(t *testing.T, c transport.Conn) {
	t.Helper()
	if err := c.Write(httpCtx(t), httpRequest(t, 0, "initialize", map[string]any{"protocolVersion": "2025-11-25"})); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	httpMustResponse(t, c, 0)
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
	if err := c.Write(httpCtx(t), httpNotification(t, "notifications/initialized")); err != nil {
		t.Fatalf("initialized: %v", err)
	}
}

func TestHTTPSessionLifecycle(t *testing.T) {
	ls := &httpLegacyServer{t: t, session: "sess-1", deletes: make(chan http.Header, 1)}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c, err := (&transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}).Connect(httpCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	httpInitialize(t, c)
	if got := c.(transport.SessionIDer).SessionID(); got != "sess-1" {
		t.Fatalf("SessionID = %q, want sess-1", got)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/list", nil)); err != nil {
		t.Fatal(err)
	}
	httpMustResponse(t, c, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	del := <-ls.deletes
	if got := del.Get("Mcp-Session-Id"); got != "sess-1" {
		t.Errorf("DELETE Mcp-Session-Id = %q, want sess-1", got)
	}
	if got := del.Get("Mcp-Protocol-Version"); got != "2025-11-25" {
		t.Errorf("DELETE MCP-Protocol-Version = %q", got)
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var got [][2]string
	for _, h := range ls.posts {
		got = append(got, [2]string{h.Get("Mcp-Session-Id"), h.Get("Mcp-Protocol-Version")})
	}
	want := [][2]string{{"", ""}, {"sess-1", "2025-11-25"}, {"sess-1", "2025-11-25"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("POST session/version headers (-want +got):\n%s", diff)
	}
	for _, h := range ls.posts {
		if h.Get("Mcp-Method") != "" {
			t.Errorf("legacy POST carried Mcp-Method %q", h.Get("Mcp-Method"))
		}
	}
	if _, err := c.Read(httpCtx(t)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read after Close = %v, want ErrClosed", err)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 9, "ping", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
}

func TestHTTPSessionExpired(t *testing.T) {
	ls := &httpLegacyServer{t: t, session: "sess-2", deletes: make(chan http.Header, 1)}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
	httpInitialize(t, c)
	ls.mu.Lock()
	ls.expired = true
	ls.mu.Unlock()
	err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/list", nil))
	var he *transport.HTTPError
	if !errors.Is(err, transport.ErrSessionExpired) || !errors.As(err, &he) || he.StatusCode != 404 || !he.SessionExpired {
		t.Fatalf("Write error = %v, want a 404 HTTPError matching ErrSessionExpired", err)
	}
	if got := c.(transport.SessionIDer).SessionID(); got != "" {
		t.Errorf("SessionID after expiry = %q, want it cleared", got)
	}
}

func TestHTTPGET405KeepsWorking(t *testing.T) {
	getSeen := make(chan struct{})
	var once sync.Once
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(getSeen) })
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	select {
	case <-getSeen:
	case <-httpCtx(t).Done():
		t.Fatal("the GET stream was never attempted")
	}
	for i := int64(1); i <= 3; i++ {
		if err := c.Write(httpCtx(t), httpRequest(t, i, "tools/list", nil)); err != nil {
			t.Fatalf("Write %d: %v", i, err)
		}
		httpMustResponse(t, c, i)
	}
}

func TestHTTPGETFailuresDoNotBreakSession(t *testing.T) {
	getSeen := make(chan struct{})
	var once sync.Once
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(getSeen) })
		w.WriteHeader(http.StatusInternalServerError)
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	<-getSeen
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/list", nil)); err != nil {
		t.Fatal(err)
	}
	httpMustResponse(t, c, 1)
	// Close interrupts the backoff wait and returns.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestHTTPLegacyGETStreamDeliversServerRequest(t *testing.T) {
	gotHeaders := make(chan http.Header, 1)
	ls := &httpLegacyServer{t: t, session: "sess-g", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		select {
		case gotHeaders <- r.Header.Clone():
		default:
		}
		httpWriteSSE(w, "id: g1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"ping\"}\n\n")
		<-r.Context().Done() // hold the stream open until the client leaves
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	m := httpMustRead(t, c)
	req, ok := m.(*jsonrpc.Request)
	if !ok || req.Method != "ping" || req.ID != jsonrpc.StringID("srv-1") {
		t.Fatalf("Read = %+v, want the server's ping", m)
	}
	h := <-gotHeaders
	if h.Get("Accept") != "text/event-stream" || h.Get("Mcp-Session-Id") != "sess-g" || h.Get("Mcp-Protocol-Version") != "2025-11-25" {
		t.Errorf("GET headers = %v", h)
	}
	// Answer it by POSTing the response.
	resp, _ := jsonrpc.NewResponse(req.ID, nil)
	if err := c.Write(httpCtx(t), resp); err != nil {
		t.Fatalf("Write response: %v", err)
	}
}

func TestHTTPLastEventIDResumption(t *testing.T) {
	lastIDs := make(chan string, 1)
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			req := httpReadRequest(t, r)
			if req.Method == "initialize" {
				httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
				return
			}
			if req.IsNotification() {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			// 2025-11-25 polling: a priming event, a retry hint, then
			// the server closes the connection before the response.
			httpWriteSSE(w, "id: stream1-0\nretry: 10\ndata:\n\n")
		case http.MethodGet:
			last := r.Header.Get("Last-Event-ID")
			if last == "" {
				w.WriteHeader(http.StatusMethodNotAllowed) // no standalone stream
				return
			}
			lastIDs <- last
			httpWriteSSE(w, "id: stream1-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"resumed\":true}}\n\n")
		}
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	if err := c.Write(httpCtx(t), httpRequest(t, 4, "tools/call", map[string]any{"name": "slow"})); err != nil {
		t.Fatal(err)
	}
	r := httpMustResponse(t, c, 4)
	if string(r.Result) != `{"resumed":true}` {
		t.Errorf("result = %s", r.Result)
	}
	if got := <-lastIDs; got != "stream1-0" {
		t.Errorf("Last-Event-ID = %q, want stream1-0", got)
	}
}

func TestHTTPResumptionRefusedIsStreamError(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		req := httpReadRequest(t, r)
		switch {
		case req.Method == "initialize":
			httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
		case req.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		default:
			httpWriteSSE(w, "id: e1\nretry: 1\ndata:\n\n")
		}
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	if err := c.Write(httpCtx(t), httpRequest(t, 8, "tools/call", map[string]any{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	_, err := c.Read(httpCtx(t))
	var se *transport.StreamError
	var he *transport.HTTPError
	if !errors.As(err, &se) || se.ID != jsonrpc.Int64ID(8) || !errors.As(err, &he) || he.StatusCode != 405 {
		t.Fatalf("Read error = %v, want StreamError{8} wrapping the 405", err)
	}
}

func TestHTTPCancelStream(t *testing.T) {
	serverDone := make(chan struct{})
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		if req.Method == "ping" {
			httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
			return
		}
		httpWriteSSE(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		<-r.Context().Done()
		close(serverDone)
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "long"})); err != nil {
		t.Fatal(err)
	}
	httpMustRead(t, c) // the progress notification: the stream is open
	sc := c.(transport.StreamCanceler)
	if !sc.CancelStream(jsonrpc.Int64ID(1)) {
		t.Fatal("CancelStream = false, want true")
	}
	select {
	case <-serverDone:
	case <-httpCtx(t).Done():
		t.Fatal("the server never saw the request end")
	}
	if sc.CancelStream(jsonrpc.Int64ID(1)) {
		t.Error("second CancelStream = true, want false")
	}
	// No StreamError is reported for a cancelled stream: the next thing
	// Read returns is the next response.
	if err := c.Write(httpCtx(t), httpRequest(t, 2, "ping", nil)); err != nil {
		t.Fatal(err)
	}
	httpMustResponse(t, c, 2)
}

func TestHTTPWriteContextCancelledBeforeHeaders(t *testing.T) {
	arrived := make(chan struct{})
	serverDone := make(chan struct{})
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		httpReadRequest(t, r)
		close(arrived)
		<-r.Context().Done()
		close(serverDone)
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	ctx, cancel := context.WithCancel(httpCtx(t))
	errc := make(chan error, 1)
	go func() { errc <- c.Write(ctx, httpRequest(t, 1, "tools/call", map[string]any{"name": "x"})) }()
	<-arrived
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want context.Canceled", err)
	}
	<-serverDone
}

// TestHTTPCrossOriginRedirectRefused: by default a POST redirected to
// another origin is not followed; the target sees nothing and Write fails
// with a RedirectError.
func TestHTTPCrossOriginRedirectRefused(t *testing.T) {
	reached := make(chan struct{}, 1)
	target := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		reached <- struct{}{}
		http.Error(w, "no", http.StatusNotFound)
	})
	origin := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/mcp", http.StatusTemporaryRedirect)
	})
	c := httpDial(t, &transport.StreamableHTTP{
		URL:         origin.URL,
		Header:      http.Header{"X-Other": {"kept"}},
		TokenSource: transport.TokenSourceFunc(func(context.Context) (string, error) { return "secret", nil }),
	})
	err := c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil))
	if !errors.Is(err, transport.ErrCrossOriginRedirect) {
		t.Fatalf("Write() = %v; want ErrCrossOriginRedirect", err)
	}
	select {
	case <-reached:
		t.Error("the other origin was reached")
	default:
	}
}

func TestHTTPSameOriginRedirectKeepsAuthorization(t *testing.T) {
	got := make(chan string, 1)
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/new" {
			http.Redirect(w, r, "/new", http.StatusPermanentRedirect)
			return
		}
		req := httpReadRequest(t, r)
		got <- r.Header.Get("Authorization")
		httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
	})
	c := httpDial(t, &transport.StreamableHTTP{
		URL:         srv.URL,
		TokenSource: transport.TokenSourceFunc(func(context.Context) (string, error) { return "secret", nil }),
	})
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil)); err != nil {
		t.Fatal(err)
	}
	httpMustResponse(t, c, 1)
	if a := <-got; a != "Bearer secret" {
		t.Errorf("Authorization after same-origin redirect = %q", a)
	}
}

func TestHTTPTokenSourceError(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		t.Error("no request should be sent")
	})
	boom := errors.New("no token")
	c := httpDial(t, &transport.StreamableHTTP{
		URL:         srv.URL,
		TokenSource: transport.TokenSourceFunc(func(context.Context) (string, error) { return "", boom }),
	})
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil)); !errors.Is(err, boom) {
		t.Fatalf("Write = %v, want the token error", err)
	}
}

func TestHTTPConnectInvalidURL(t *testing.T) {
	for _, u := range []string{"", "ftp://x/", "/relative", "http://%zz"} {
		if _, err := (&transport.StreamableHTTP{URL: u}).Connect(httpCtx(t)); err == nil {
			t.Errorf("Connect(%q) succeeded, want an error", u)
		}
	}
}

func TestHTTPKind(t *testing.T) {
	c := httpDial(t, &transport.StreamableHTTP{URL: "http://127.0.0.1:1/"})
	if k := c.(transport.Kinder).Kind(); k != transport.KindHTTP {
		t.Errorf("Kind = %q", k)
	}
}

func TestHTTPStreamBrokenByServer(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		httpReadRequest(t, r)
		httpWriteSSE(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n")
		panic(http.ErrAbortHandler) // the server dies mid-call: the connection is cut
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	httpMustRead(t, c)
	_, err := c.Read(httpCtx(t))
	var se *transport.StreamError
	if !errors.As(err, &se) || se.ID != jsonrpc.Int64ID(1) || se.Err == nil {
		t.Fatalf("Read error = %v, want StreamError{1} with the read error", err)
	}
}

func TestHTTPResponseHeaderTimeoutBoundsNotificationsOnly(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		if req.IsNotification() {
			<-r.Context().Done() // never answers
			return
		}
		// A JSON-mode server holds the headers until the result is ready,
		// longer than the response-header timeout.
		select {
		case <-time.After(50 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, ResponseHeaderTimeout: time.Millisecond})
	err := c.Write(httpCtx(t), httpNotification(t, "notifications/initialized"))
	var ne *transport.NetworkError
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("notification Write = %v, want a NetworkError that is a timeout", err)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "slow"})); err != nil {
		t.Fatalf("request Write = %v; a request must be bounded by its context only", err)
	}
	httpMustResponse(t, c, 1)
}

func TestHTTPCancelStreamBeforeHeaders(t *testing.T) {
	arrived := make(chan struct{})
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		httpReadRequest(t, r)
		close(arrived)
		<-r.Context().Done()
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	errc := make(chan error, 1)
	go func() { errc <- c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", map[string]any{"name": "x"})) }()
	<-arrived
	if !c.(transport.StreamCanceler).CancelStream(jsonrpc.Int64ID(1)) {
		t.Fatal("CancelStream = false for a pending request")
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v, want an error matching context.Canceled", err)
	}
}

func TestHTTPGETStreamReconnectsWithLastEventID(t *testing.T) {
	lastIDs := make(chan string, 2)
	var mu sync.Mutex
	n := 0
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		lastIDs <- r.Header.Get("Last-Event-ID")
		if k == 1 {
			// One message, a short retry, then the server closes the stream.
			httpWriteSSE(w, "retry: 5\nid: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
			return
		}
		httpWriteSSE(w, "id: e2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n\n")
		<-r.Context().Done()
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	var got []string
	for range 2 {
		m := httpMustRead(t, c)
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("Read = %T", m)
		}
		got = append(got, req.Method)
	}
	if diff := cmp.Diff([]string{"notifications/tools/list_changed", "notifications/prompts/list_changed"}, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"", "e1"}, []string{<-lastIDs, <-lastIDs}); diff != "" {
		t.Errorf("Last-Event-ID of the two GETs (-want +got):\n%s", diff)
	}
}
