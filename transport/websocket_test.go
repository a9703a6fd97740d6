package transport_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// wsServer starts an httptest server (on 127.0.0.1) whose handler accepts
// a WebSocket with subprotocol mcp and runs serve on it. The server is
// closed when the test ends, after the connections it made.
func wsServer(t testing.TB, serve func(ctx context.Context, ws *websocket.Conn, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"mcp"}})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		serve(r.Context(), ws, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// wsEcho answers every request with its params as the result.
func wsEcho(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			ws.Close(websocket.StatusPolicyViolation, "not JSON-RPC")
			return
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok || req.IsNotification() {
			continue
		}
		resp, _ := jsonrpc.NewResponse(req.ID, req.Params)
		if len(req.Params) == 0 {
			resp, _ = jsonrpc.NewResponse(req.ID, nil)
		}
		b, _ := jsonrpc.EncodeMessage(resp)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			return
		}
	}
}

func TestWebSocketRoundTrip(t *testing.T) {
	var (
		mu       sync.Mutex
		gotAuth  string
		gotProto string
	)
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) {
		mu.Lock()
		gotAuth, gotProto = r.Header.Get("Authorization"), ws.Subprotocol()
		mu.Unlock()
		wsEcho(ctx, ws, r)
	})
	tr := &transport.WebSocket{URL: srv.URL, Header: http.Header{"Authorization": {"Bearer t0k3n"}}}
	c := connect(t, tr)
	if k, ok := c.(transport.Kinder); !ok || k.Kind() != transport.KindWebSocket {
		t.Errorf("Kind() = %v, want %q", c, transport.KindWebSocket)
	}
	pv, ok := c.(transport.ProtocolVersionSetter)
	if !ok {
		t.Fatalf("WebSocket connection does not implement ProtocolVersionSetter")
	}
	pv.SetProtocolVersion("2026-07-28")
	for i, params := range []string{`{"a":1}`, `{"s":"line1\nline2"}`, `[true,null]`} {
		r := call(t, c, int64(i), "echo", []byte(params))
		if diff := cmp.Diff(params, string(r.Result)); diff != "" {
			t.Errorf("echo mismatch (-want +got):\n%s", diff)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if gotAuth != "Bearer t0k3n" || gotProto != "mcp" {
		t.Errorf("server saw Authorization %q, subprotocol %q; want %q, %q", gotAuth, gotProto, "Bearer t0k3n", "mcp")
	}
}

func TestWebSocketReadLimit(t *testing.T) {
	tests := []struct {
		name     string
		limit    int
		size     int
		wantOver bool
	}{
		{"under", 1024, 1024 - 100, false},
		{"exactly the limit", 1024, 1024, false},
		{"one byte over", 1024, 1024 + 1, true},
		{"over", 1024, 4 * 1024, true},
		// Over the reader's 64 KiB pieces, to cover assembly.
		{"large exactly the limit", 200 << 10, 200 << 10, false},
		{"large one byte over", 200 << 10, 200<<10 + 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
				pad := strings.Repeat("x", tt.size-len(`{"jsonrpc":"2.0","method":"big","params":{"p":""}}`))
				ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"big","params":{"p":"`+pad+`"}}`))
				ws.Read(ctx) // until the client goes
			})
			c := connect(t, &transport.WebSocket{URL: srv.URL, MaxMessageSize: int64(tt.limit)})
			m, err := c.Read(t.Context())
			if !tt.wantOver {
				if err != nil {
					t.Fatalf("Read() = %v", err)
				}
				if r, ok := m.(*jsonrpc.Request); !ok || r.Method != "big" {
					t.Errorf("Read() = %#v, want notification big", m)
				}
				return
			}
			if tooBig, ok := errors.AsType[*transport.MessageTooLargeError](err); !ok || tooBig.Limit != tt.limit {
				t.Errorf("Read() = %v, %v; want *MessageTooLargeError{Limit: %d}", m, err, tt.limit)
			}
		})
	}
}

// TestWebSocketMessagesKeepTheirBytes: messages of sizes around the
// reader's 64 KiB pieces, read ahead of each other, each keep their own
// bytes: a message decoded from a pooled piece must not point into it once
// the piece serves the next message.
func TestWebSocketMessagesKeepTheirBytes(t *testing.T) {
	sizes := sizesAroundChunks()
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		for i, n := range sizes {
			if err := ws.Write(ctx, websocket.MessageText, sizedNote(i, n)); err != nil {
				return
			}
		}
		ws.Read(ctx) // until the client goes
	})
	c := connect(t, &transport.WebSocket{URL: srv.URL, MaxMessageSize: 2 << 20})
	checkSizedNotes(t, c, sizes)
}

func TestWebSocketServerClose(t *testing.T) {
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","method":"bye"}`))
		ws.Close(websocket.StatusGoingAway, "shutting down")
	})
	c := connect(t, &transport.WebSocket{URL: srv.URL})
	readNotification(t, c, "bye")
	err := readErr(t, c)
	if !errors.Is(err, transport.ErrClosed) || !strings.Contains(err.Error(), "shutting down") {
		t.Errorf("Read() after the server closed = %v, want ErrClosed with the reason", err)
	}
	if err := c.Write(t.Context(), request(t, 1, "echo", nil)); err == nil {
		t.Errorf("Write() after the server closed = nil, want an error")
	}
}

// TestWebSocketWriteAfterConnectionBroke: once the reader saw the
// connection drop (a network error, no close handshake), Write sends
// nothing and its error, matching ErrClosed, wraps no *NetworkError: the
// read's network error says nothing of this message, which never left.
func TestWebSocketWriteAfterConnectionBroke(t *testing.T) {
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		ws.CloseNow() // drops the TCP connection
	})
	c := connect(t, &transport.WebSocket{URL: srv.URL})
	if _, ok := errors.AsType[*transport.NetworkError](readErr(t, c)); !ok {
		t.Fatal("Read() after the drop: want the connection's *NetworkError")
	}
	err := c.Write(t.Context(), request(t, 1, "echo", nil))
	if _, ok := errors.AsType[*transport.NetworkError](err); ok || !errors.Is(err, transport.ErrClosed) {
		t.Fatalf("Write() after the drop = %v, want ErrClosed and no *NetworkError", err)
	}
}

func TestWebSocketHandshakeRejected(t *testing.T) {
	tests := []struct {
		name   string
		status int
		header http.Header
		body   string
		want   *transport.HTTPError
	}{
		{
			name:   "401 with challenge",
			status: http.StatusUnauthorized,
			header: http.Header{"Www-Authenticate": {`Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`}},
			body:   "unauthorized",
			want: &transport.HTTPError{
				Method: "GET", StatusCode: 401, ContentType: "text/plain; charset=utf-8",
				WWWAuthenticate: `Bearer resource_metadata="https://example.com/.well-known/oauth-protected-resource"`,
				Body:            []byte("unauthorized\n"),
			},
		},
		{
			name:   "503 with Retry-After",
			status: http.StatusServiceUnavailable,
			header: http.Header{"Retry-After": {"7"}},
			body:   "busy",
			want:   &transport.HTTPError{Method: "GET", StatusCode: 503, ContentType: "text/plain; charset=utf-8", RetryAfter: 7 * time.Second, Body: []byte("busy\n")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range tt.header {
					w.Header()[k] = v
				}
				http.Error(w, tt.body, tt.status)
			}))
			defer srv.Close()
			c, err := (&transport.WebSocket{URL: srv.URL}).Connect(t.Context())
			if c != nil {
				c.Close()
			}
			he, ok := errors.AsType[*transport.HTTPError](err)
			if !ok {
				t.Fatalf("Connect() error = %v (%T), want *HTTPError", err, err)
			}
			tt.want.URL = srv.URL
			if diff := cmp.Diff(tt.want, he); diff != "" {
				t.Errorf("HTTPError mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWebSocketHandshakeJSONRPCBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported protocol version"}}`)
	}))
	defer srv.Close()
	_, err := (&transport.WebSocket{URL: srv.URL}).Connect(t.Context())
	he, ok := errors.AsType[*transport.HTTPError](err)
	if !ok || he.Response == nil || !errors.Is(he.Response.Err(), jsonrpc.ErrUnsupportedProtocolVersion) {
		t.Errorf("Connect() error = %v, want *HTTPError whose Response is the -32022 error", err)
	}
}

func TestWebSocketDialNetworkError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there any more
	_, err = (&transport.WebSocket{URL: "ws://" + addr}).Connect(t.Context())
	if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || ne.Op != "dial" {
		t.Errorf("Connect() to a closed port = %v, want *NetworkError with Op dial", err)
	}
}

func TestWebSocketPing(t *testing.T) {
	pinged := make(chan struct{})
	var once sync.Once
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
			Subprotocols: []string{"mcp"},
			OnPingReceived: func(context.Context, []byte) bool {
				once.Do(func() { close(pinged) })
				return true
			},
		})
		if err != nil {
			return
		}
		defer ws.CloseNow()
		wsEcho(r.Context(), ws, r)
	}))
	defer srv.Close()
	c := connect(t, &transport.WebSocket{URL: srv.URL, PingInterval: 200 * time.Millisecond})
	select {
	case <-pinged:
	case <-time.After(testTimeout):
		t.Fatal("the server saw no ping")
	}
	// Pings answered keep the connection alive. (Each ping must be
	// answered within the interval; 200 ms leaves room for a loaded
	// machine.)
	call(t, c, 1, "echo", nil)
	c.Close()
}

// TestWebSocketPingUnanswered: a server that never reads never answers a
// ping; the connection must end with the ping failure.
func TestWebSocketPingUnanswered(t *testing.T) {
	release := make(chan struct{})
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		select {
		case <-release:
		case <-ctx.Done():
		}
	})
	defer close(release)
	c := connect(t, &transport.WebSocket{URL: srv.URL, PingInterval: 20 * time.Millisecond})
	err := readErr(t, c)
	if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || ne.Op != "ping" {
		t.Errorf("Read() = %v, want *NetworkError with Op ping", err)
	}
}

// TestWebSocketCloseUnresponsiveServer: the server never reads, so never
// answers the close frame; with a Write blocked on the full connection
// the close frame cannot even be sent. Close must still return, within
// the close handshake's bounds (5 s to send the close frame, 5 s for the
// answer), with nil, and the blocked Write must return.
func TestWebSocketCloseUnresponsiveServer(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the close handshake bound")
	}
	for _, blocked := range []bool{false, true} {
		release := make(chan struct{})
		srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
			<-release
		})
		c, err := (&transport.WebSocket{URL: srv.URL}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var writes <-chan error
		if blocked {
			writes = blockedWrites(t, c)
			time.Sleep(200 * time.Millisecond) // the buffers fill
		}
		if err := closeWithin(t, c, 10*time.Second+2*time.Second); err != nil {
			t.Errorf("Close() = %v", err)
		}
		if writes != nil {
			select {
			case err := <-writes:
				if err == nil {
					t.Error("the blocked Write succeeded after Close")
				}
			case <-time.After(testTimeout):
				t.Fatal("the blocked Write did not return after Close")
			}
		}
		close(release)
	}
}

func TestWebSocketCloseIdempotentAndConcurrent(t *testing.T) {
	srv := wsServer(t, wsEcho)
	c := connect(t, &transport.WebSocket{URL: srv.URL})
	call(t, c, 1, "echo", nil)
	checkCloseIdempotent(t, c)
}

func BenchmarkWebSocketRoundTrip(b *testing.B) {
	resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}`)
	srv := wsServer(b, func(_ context.Context, ws *websocket.Conn, _ *http.Request) {
		// A context without Done keeps the server's own per-message
		// timers out of the measured allocations; the client's Close
		// ends this loop.
		ctx := context.Background()
		for {
			_, r, err := ws.Reader(ctx)
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
			if err := ws.Write(ctx, websocket.MessageText, resp); err != nil {
				return
			}
		}
	})
	c := connect(b, &transport.WebSocket{URL: srv.URL})
	ctx := context.Background()
	req := request(b, 1, "tools/call", map[string]any{"name": "add", "arguments": map[string]int{"a": 1, "b": 2}})
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
}

// BenchmarkWebSocketLargeMessage reads a 1 MiB response. The server runs
// in this process, but writes a prepared message, so B/op is mostly the
// client's reading and decoding.
func BenchmarkWebSocketLargeMessage(b *testing.B) {
	const size = 1 << 20
	resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}]}}`)
	srv := wsServer(b, func(_ context.Context, ws *websocket.Conn, _ *http.Request) {
		ctx := context.Background()
		for {
			_, r, err := ws.Reader(ctx)
			if err != nil {
				return
			}
			if _, err := io.Copy(io.Discard, r); err != nil {
				return
			}
			if err := ws.Write(ctx, websocket.MessageText, resp); err != nil {
				return
			}
		}
	})
	c := connect(b, &transport.WebSocket{URL: srv.URL})
	ctx := context.Background()
	req := request(b, 1, "tools/call", map[string]any{"name": "big"})
	b.SetBytes(int64(len(resp)))
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Response); !ok || len(r.Result) < size {
			b.Fatalf("Read() = %T, want a response with a 1 MiB result", m)
		}
	}
	c.Close()
}

// TestWebSocketMaxMessageSizeHuge: a MaxMessageSize of the largest int64
// (no limit worth the name) reads messages as any other, small ones and
// ones assembled from several pieces. The reader's backstop bound used to
// wrap around and refuse every message as too large.
func TestWebSocketMaxMessageSizeHuge(t *testing.T) {
	sizes := []int{100, 100 << 10}
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, _ *http.Request) {
		for i, n := range sizes {
			if err := ws.Write(ctx, websocket.MessageText, sizedNote(i, n)); err != nil {
				return
			}
		}
		ws.Read(ctx) // until the client goes
	})
	c := connect(t, &transport.WebSocket{URL: srv.URL, MaxMessageSize: math.MaxInt64})
	checkSizedNotes(t, c, sizes)
}
