package testserver

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

func TestWebSocket(t *testing.T) {
	srv := New(Options{})
	url := "ws" + strings.TrimPrefix(startHTTP(t, srv, srv.WebSocketHandler()), "http")
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()

	t.Run("needs the mcp subprotocol", func(t *testing.T) {
		c, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			return // refused at the handshake is fine too
		}
		defer c.CloseNow()
		if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
			t.Errorf("read without subprotocol = %v, want policy violation close", err)
		}
	})

	c, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if c.Subprotocol() != "mcp" {
		t.Fatalf("subprotocol = %q", c.Subprotocol())
	}
	roundTrip := func(id int64, method string, params any) *jsonrpc.Response {
		t.Helper()
		req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, params)
		b, _ := jsonrpc.EncodeMessage(req)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
		for {
			typ, data, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if typ != websocket.MessageText {
				t.Fatalf("frame type %v", typ)
			}
			m, err := jsonrpc.DecodeMessage(data)
			if err != nil {
				t.Fatal(err)
			}
			if resp, ok := m.(*jsonrpc.Response); ok {
				return resp
			}
		}
	}
	if res := result(t, roundTrip(1, "server/discover", withMeta(nil, modernMeta("")))); res["resultType"] != "complete" {
		t.Errorf("discover over WebSocket = %v", res)
	}
	res := result(t, roundTrip(2, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}))
	if res["protocolVersion"] != "2025-06-18" {
		t.Errorf("initialize over WebSocket = %v", res)
	}
	if got := firstText(t, result(t, roundTrip(3, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "ws"}}))); got != "ws" {
		t.Errorf("echo = %q", got)
	}
	if r := srv.Received()[0]; r.Transport != TransportWebSocket {
		t.Errorf("recorded transport = %q", r.Transport)
	}
}

func TestSSEHandler(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.SSEHandler())

	// Streamable HTTP is refused: a POST without a session is 404.
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "initialize", map[string]any{"protocolVersion": "2024-11-05", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	if r := post(t, url, req, nil); r.status != 404 {
		t.Fatalf("POST without session = %d, want 404", r.status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, url+"/sse", nil)
	get.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	nextEvent := func() (event, data string) {
		t.Helper()
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				t.Fatalf("reading SSE: %v", err)
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case strings.HasPrefix(line, "event: "):
				event = line[len("event: "):]
			case strings.HasPrefix(line, "data: "):
				data = line[len("data: "):]
			case line == "" && data != "":
				return event, data
			}
		}
	}
	ev, endpoint := nextEvent()
	if ev != "endpoint" || !strings.HasPrefix(endpoint, "/sse?sessionId=") {
		t.Fatalf("first event %q %q, want the endpoint", ev, endpoint)
	}
	if r := post(t, url+endpoint, req, nil); r.status != 202 {
		t.Fatalf("POST to endpoint = %d, want 202", r.status)
	}
	ev, data := nextEvent()
	m, err := jsonrpc.DecodeMessage([]byte(data))
	if err != nil || ev != "message" {
		t.Fatalf("event %q %q: %v", ev, data, err)
	}
	res := result(t, m.(*jsonrpc.Response))
	if res["protocolVersion"] != "2024-11-05" {
		t.Errorf("initialize over HTTP+SSE = %v, want 2024-11-05 echoed", res)
	}
	call, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(2), "tools/call", map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 1}})
	post(t, url+endpoint, call, nil)
	_, data = nextEvent()
	m, _ = jsonrpc.DecodeMessage([]byte(data))
	if got := firstText(t, result(t, m.(*jsonrpc.Response))); got != "2" {
		t.Errorf("add = %q", got)
	}
	var methods []string
	for _, r := range srv.Received() {
		methods = append(methods, r.Transport+" "+r.HTTPMethod+" "+r.Method)
	}
	want := []string{"sse POST ", "sse GET ", "sse POST initialize", "sse POST tools/call"}
	if d := cmp.Diff(want, methods); d != "" {
		t.Errorf("records (-want +got):\n%s", d)
	}
}

func TestParseFault(t *testing.T) {
	cases := []struct {
		spec string
		want Fault
		bad  bool
	}{
		{spec: "exit", want: Fault{Kind: FaultExit}},
		{spec: "rpc-error:code=-32601,times=1", want: Fault{Kind: FaultRPCError, Code: -32601, Times: 1}},
		{spec: "http-status:status=401,header=WWW-Authenticate=Bearer realm=x", want: Fault{Kind: FaultHTTPStatus, Status: 401, Header: http.Header{"Www-Authenticate": {"Bearer realm=x"}}}},
		{spec: `unsupported-version:supported=2099-01-01|2026-07-28,skip=2,method=*`, want: Fault{Kind: FaultUnsupportedVersion, Supported: []string{"2099-01-01", "2026-07-28"}, Skip: 2, Method: "*"}},
		{spec: `result:result={"a":1,"b":[1,2]}`, want: Fault{Kind: FaultResult, Result: []byte(`{"a":1,"b":[1,2]}`)}},
		{spec: "nope", bad: true},
		{spec: "exit:times=x", bad: true},
		{spec: "exit:what=1", bad: true},
	}
	for _, tc := range cases {
		got, err := ParseFault(tc.spec)
		if tc.bad {
			if err == nil {
				t.Errorf("ParseFault(%q) = %+v, want an error", tc.spec, got)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseFault(%q): %v", tc.spec, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); d != "" {
			t.Errorf("ParseFault(%q) (-want +got):\n%s", tc.spec, d)
		}
	}
	for k := FaultNone; k < faultKindEnd; k++ {
		if f, err := ParseFault(k.String()); err != nil || f.Kind != k {
			t.Errorf("ParseFault(%q) = %v, %v", k, f.Kind, err)
		}
	}
}
