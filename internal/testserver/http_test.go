package testserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

func TestHTTPModern(t *testing.T) {
	srv := New(Options{Era: ModernOnly, TTL: -1})
	url := startHTTP(t, srv, srv.Handler())

	t.Run("json result", func(t *testing.T) {
		req, h := modernRequest(t, 1, "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "hi"}}, "")
		r := post(t, url, req, h)
		if r.status != 200 || !strings.HasPrefix(r.ctype, "application/json") {
			t.Fatalf("status %d type %q, want 200 JSON", r.status, r.ctype)
		}
		if got := firstText(t, result(t, r.response(t))); got != "hi" {
			t.Errorf("echo = %q", got)
		}
		if r.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("modern response minted a session id")
		}
	})
	t.Run("no cache hints with negative TTL", func(t *testing.T) {
		req, h := modernRequest(t, 2, "tools/list", nil, "")
		res := result(t, post(t, url, req, h).response(t))
		if _, ok := res["ttlMs"]; ok {
			t.Errorf("ttlMs present with TTL < 0")
		}
	})

	statusCases := []struct {
		name   string
		mutate func(req *jsonrpc.Request, h http.Header)
		method string
		params map[string]any
		status int
		code   int64
	}{
		{"unknown method 404", nil, "nope", nil, 404, jsonrpc.CodeMethodNotFound},
		{"bad version 400", func(r *jsonrpc.Request, h http.Header) {
			r.Params = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"1900-01-01","io.modelcontextprotocol/clientCapabilities":{}}}`)
			h.Set("MCP-Protocol-Version", "1900-01-01")
		}, "tools/list", nil, 400, jsonrpc.CodeUnsupportedProtocolVersion},
		{"missing meta 400", func(r *jsonrpc.Request, h http.Header) { r.Params = nil }, "tools/list", nil, 400, jsonrpc.CodeInvalidParams},
		{"method header mismatch", func(r *jsonrpc.Request, h http.Header) { h.Set("Mcp-Method", "prompts/list") }, "tools/list", nil, 400, jsonrpc.CodeHeaderMismatch},
		{"version header mismatch", func(r *jsonrpc.Request, h http.Header) { h.Set("MCP-Protocol-Version", "2025-11-25") }, "tools/list", nil, 400, jsonrpc.CodeHeaderMismatch},
		{"name header mismatch", func(r *jsonrpc.Request, h http.Header) { h.Set("Mcp-Name", "add") }, "tools/call", map[string]any{"name": "echo"}, 400, jsonrpc.CodeHeaderMismatch},
		{"param header mismatch", func(r *jsonrpc.Request, h http.Header) { h.Set("Mcp-Param-Region", "eu") }, "tools/call", map[string]any{"name": "headers", "arguments": map[string]any{"region": "us"}}, 400, jsonrpc.CodeHeaderMismatch},
		{"missing capability 400", nil, "tools/call", map[string]any{"name": "ask_user"}, 400, jsonrpc.CodeMissingRequiredClientCapability},
		{"missing Mcp-Method", func(r *jsonrpc.Request, h http.Header) { h.Del("Mcp-Method") }, "tools/list", nil, 400, jsonrpc.CodeHeaderMismatch},
		{"missing Mcp-Name", func(r *jsonrpc.Request, h http.Header) { h.Del("Mcp-Name") }, "tools/call", map[string]any{"name": "echo"}, 400, jsonrpc.CodeHeaderMismatch},
		{"omitted param header", nil, "tools/call", map[string]any{"name": "headers", "arguments": map[string]any{"region": "us"}}, 400, jsonrpc.CodeHeaderMismatch},
		{"invalid base64 param", func(r *jsonrpc.Request, h http.Header) { h.Set("Mcp-Param-Region", "=?base64?dXM?=") }, "tools/call", map[string]any{"name": "headers", "arguments": map[string]any{"region": "us"}}, 400, jsonrpc.CodeHeaderMismatch},
		{"header mismatch before version", func(r *jsonrpc.Request, h http.Header) {
			r.Params = json.RawMessage(`{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999","io.modelcontextprotocol/clientCapabilities":{}}}`)
		}, "server/discover", nil, 400, jsonrpc.CodeHeaderMismatch},
		{"initialize with modern _meta is removed", nil, "initialize", nil, 404, jsonrpc.CodeMethodNotFound},
	}
	for i, tc := range statusCases {
		t.Run(tc.name, func(t *testing.T) {
			req, h := modernRequest(t, int64(10+i), tc.method, tc.params, "")
			if tc.mutate != nil {
				tc.mutate(req, h)
			}
			r := post(t, url, req, h)
			if r.status != tc.status {
				t.Errorf("status = %d, want %d (body %s)", r.status, tc.status, r.body)
			}
			if e := rpcErr(t, r.response(t)); e.Code != tc.code {
				t.Errorf("code = %d, want %d", e.Code, tc.code)
			}
		})
	}

	t.Run("lenient headers", func(t *testing.T) {
		lenient := New(Options{Era: ModernOnly, LenientHeaders: true})
		lurl := startHTTP(t, lenient, lenient.Handler())
		req, h := modernRequest(t, 50, "tools/list", nil, "")
		h.Del("Mcp-Method")
		if r := post(t, lurl, req, h); r.status != 200 {
			t.Errorf("lenient server without Mcp-Method: %d %s", r.status, r.body)
		}
	})
	t.Run("dns rebinding", func(t *testing.T) {
		req, h := modernRequest(t, 51, "tools/list", nil, "")
		h.Set("Origin", "http://evil.example.com")
		if r := post(t, url, req, h); r.status != 403 {
			t.Errorf("foreign Origin: status %d, want 403", r.status)
		}
		h.Set("Origin", "http://localhost:1234")
		if r := post(t, url, req, h); r.status != 200 {
			t.Errorf("localhost Origin: status %d, want 200", r.status)
		}
	})
	t.Run("param headers", func(t *testing.T) {
		args := map[string]any{"region": "üs-east", "priority": 3, "verbose": true}
		req, h := modernRequest(t, 30, "tools/call", map[string]any{"name": "headers", "arguments": args}, "")
		h.Set("Mcp-Param-Region", "=?base64?w7xzLWVhc3Q=?=")
		h.Set("Mcp-Param-Priority", "3")
		h.Set("Mcp-Param-Verbose", "true")
		res := result(t, post(t, url, req, h).response(t))
		if got := firstText(t, res); got != "Mcp-Param-Priority,Mcp-Param-Region,Mcp-Param-Verbose" {
			t.Errorf("headers tool saw %q", got)
		}
	})

	t.Run("progress on SSE", func(t *testing.T) {
		req, h := modernRequest(t, 40, "tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 2}}, "")
		req.Params = json.RawMessage(strings.Replace(string(req.Params), `"_meta":{`, `"_meta":{"progressToken":7,`, 1))
		r := post(t, url, req, h)
		if !strings.HasPrefix(r.ctype, "text/event-stream") {
			t.Fatalf("content type %q, want an event stream", r.ctype)
		}
		var methods []string
		for _, m := range r.messages {
			if n, ok := m.(*jsonrpc.Request); ok {
				methods = append(methods, n.Method)
			}
		}
		if d := cmp.Diff([]string{"notifications/progress", "notifications/progress"}, methods); d != "" {
			t.Errorf("stream notifications (-want +got):\n%s", d)
		}
		for _, ev := range r.events {
			if ev.id != "" {
				t.Errorf("modern SSE event has id %q", ev.id)
			}
		}
		result(t, r.response(t))
	})

	t.Run("GET and DELETE are 405", func(t *testing.T) {
		for _, m := range []string{http.MethodGet, http.MethodDelete} {
			req, _ := http.NewRequest(m, url, nil)
			req.Header.Set("Accept", "text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 405 {
				t.Errorf("%s status = %d, want 405", m, resp.StatusCode)
			}
		}
	})

	t.Run("recorded headers", func(t *testing.T) {
		var found bool
		for _, r := range srv.Received() {
			if r.Method == "tools/call" && r.ID == jsonrpc.Int64ID(1) {
				found = true
				if r.Headers.Get("Mcp-Method") != "tools/call" || r.Headers.Get("Mcp-Name") != "echo" || r.HTTPMethod != "POST" {
					t.Errorf("recorded headers = %v", r.Headers)
				}
				if string(r.Meta("io.modelcontextprotocol/protocolVersion")) != `"2026-07-28"` {
					t.Errorf("recorded meta version = %s", r.Meta("io.modelcontextprotocol/protocolVersion"))
				}
			}
		}
		if !found {
			t.Errorf("request 1 not recorded")
		}
	})
}

func TestHTTPModernSSEOption(t *testing.T) {
	srv := New(Options{SSEResponses: true})
	url := startHTTP(t, srv, srv.Handler())
	req, h := modernRequest(t, 1, "server/discover", nil, "")
	r := post(t, url, req, h)
	if !strings.HasPrefix(r.ctype, "text/event-stream") {
		t.Fatalf("content type %q, want an event stream", r.ctype)
	}
	if res := result(t, r.response(t)); res["resultType"] != "complete" {
		t.Errorf("discover over SSE = %v", res)
	}
	// The per-request knob overrides the option.
	srv.SetFaults(Fault{Kind: FaultRespondJSON})
	if r := post(t, url, req, h); !strings.HasPrefix(r.ctype, "application/json") {
		t.Errorf("with FaultRespondJSON content type %q", r.ctype)
	}
}

func TestHTTPListen(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	req, h := modernRequest(t, 5, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, "")
	nextData := openSSE(t, url, req, h).data
	if ack := nextData(); !strings.Contains(ack, "notifications/subscriptions/acknowledged") || !strings.Contains(ack, `"io.modelcontextprotocol/subscriptionId":5`) {
		t.Fatalf("first event = %s", ack)
	}
	srv.NotifyToolsChanged()
	if n := nextData(); !strings.Contains(n, "notifications/tools/list_changed") {
		t.Errorf("second event = %s", n)
	}
	srv.EndListens()
	if end := nextData(); !strings.Contains(end, `"id":5`) || !strings.Contains(end, `"resultType":"complete"`) {
		t.Errorf("final event = %s", end)
	}
}

// legacyInit opens a legacy HTTP session and returns its id.
func legacyInit(t *testing.T, url, version, caps string) string {
	t.Helper()
	if caps == "" {
		caps = "{}"
	}
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "initialize", map[string]any{
		"protocolVersion": version, "capabilities": json.RawMessage(caps), "clientInfo": map[string]any{"name": "t", "version": "1"},
	})
	r := post(t, url, req, nil)
	sid := r.header.Get("Mcp-Session-Id")
	if r.status != 200 || sid == "" {
		t.Fatalf("initialize: status %d session %q body %s", r.status, sid, r.body)
	}
	res := result(t, r.response(t))
	if res["protocolVersion"] != version {
		t.Fatalf("initialize version = %v", res["protocolVersion"])
	}
	n, _ := jsonrpc.NewNotification("notifications/initialized", nil)
	if r := post(t, url, n, legacyHeaders(sid, version)); r.status != 202 {
		t.Fatalf("initialized status = %d", r.status)
	}
	return sid
}

func legacyHeaders(sid, version string) http.Header {
	h := http.Header{}
	h.Set("Mcp-Session-Id", sid)
	h.Set("MCP-Protocol-Version", version)
	return h
}

func TestHTTPLegacySessions(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	sid := legacyInit(t, url, "2025-06-18", "")
	list, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(2), "tools/list", nil)

	t.Run("with session", func(t *testing.T) {
		r := post(t, url, list, legacyHeaders(sid, "2025-06-18"))
		if r.status != 200 || len(result(t, r.response(t))["tools"].([]any)) == 0 {
			t.Errorf("tools/list: %d %s", r.status, r.body)
		}
	})
	cases := []struct {
		name   string
		hdr    http.Header
		status int
	}{
		{"no session", http.Header{}, 400},
		{"unknown session", legacyHeaders("nope", "2025-06-18"), 404},
		{"wrong version header", legacyHeaders(sid, "2025-11-25"), 400},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if r := post(t, url, list, tc.hdr); r.status != tc.status {
				t.Errorf("status = %d, want %d", r.status, tc.status)
			}
		})
	}
	t.Run("delete ends the session", func(t *testing.T) {
		req, _ := http.NewRequest(http.MethodDelete, url, nil)
		req.Header = legacyHeaders(sid, "2025-06-18")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("DELETE = %d", resp.StatusCode)
		}
		if r := post(t, url, list, legacyHeaders(sid, "2025-06-18")); r.status != 404 {
			t.Errorf("after DELETE status = %d, want 404", r.status)
		}
	})
	t.Run("expire fault", func(t *testing.T) {
		sid := legacyInit(t, url, "2025-11-25", "")
		srv.SetFaults(Fault{Kind: FaultExpireSession, Skip: 1, Times: 1})
		h := legacyHeaders(sid, "2025-11-25")
		if r := post(t, url, list, h); r.status != 200 {
			t.Errorf("first request status = %d, want 200", r.status)
		}
		if r := post(t, url, list, h); r.status != 404 {
			t.Errorf("second request status = %d, want 404", r.status)
		}
		srv.SetFaults()
	})
}

func TestHTTPLegacyServerRequests(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	sid := legacyInit(t, url, "2025-11-25", `{"elicitation":{}}`)
	h := legacyHeaders(sid, "2025-11-25")

	call, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(7), "tools/call", map[string]any{"name": "ask_user"})
	st := openSSE(t, url, call, h)
	sreq, ok := st.message().(*jsonrpc.Request)
	if !ok || sreq.Method != "elicitation/create" {
		t.Fatalf("first stream message = %+v, want elicitation/create", sreq)
	}
	if st.lastID == "" {
		t.Errorf("legacy SSE event without id")
	}
	answer, _ := jsonrpc.NewResponse(sreq.ID, map[string]any{"action": "accept", "content": map[string]any{"name": "Lin"}})
	if r := post(t, url, answer, h); r.status != 202 {
		t.Fatalf("posting the response: %d", r.status)
	}
	final, ok := st.message().(*jsonrpc.Response)
	if !ok || final.ID != jsonrpc.Int64ID(7) {
		t.Fatalf("final = %+v", final)
	}
	if got := firstText(t, result(t, final)); got != "Hello, Lin!" {
		t.Errorf("ask_user = %q", got)
	}
}

func TestHTTPLegacyStandaloneAndResume(t *testing.T) {
	srv := New(Options{PrimingEvents: true})
	url := startHTTP(t, srv, srv.Handler())
	sid := legacyInit(t, url, "2025-11-25", "")
	h := legacyHeaders(sid, "2025-11-25")

	// A notification before the GET is buffered for the standalone stream.
	srv.NotifyToolsChanged()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	get.Header = h.Clone()
	get.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	readData := newSSEStream(t, resp.Body).data
	if d := readData(); !strings.Contains(d, "notifications/tools/list_changed") {
		t.Errorf("GET stream first = %s", d)
	}
	srv.NotifyPromptsChanged()
	if d := readData(); !strings.Contains(d, "notifications/prompts/list_changed") {
		t.Errorf("GET stream second = %s", d)
	}
	// A second standalone stream is refused.
	get2, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	get2.Header = get.Header.Clone()
	if r2, err := http.DefaultClient.Do(get2); err == nil {
		r2.Body.Close()
		if r2.StatusCode != http.StatusConflict {
			t.Errorf("second GET = %d, want 409", r2.StatusCode)
		}
	}
	resp.Body.Close()

	// A POST stream that breaks before its response can be resumed.
	srv.SetFaults(Fault{Kind: FaultBreakStream, Method: "tools/call", Times: 1})
	call, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(9), "tools/call", map[string]any{"name": "echo", "arguments": map[string]any{"text": "again"}})
	r := post(t, url, call, h)
	if len(r.messages) != 0 || len(r.events) != 1 || r.events[0].id == "" || r.events[0].retry != "50" {
		t.Fatalf("broken stream events = %+v messages %d, want one priming event", r.events, len(r.messages))
	}
	resume, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resume.Header = h.Clone()
	resume.Header.Set("Accept", "text/event-stream")
	resume.Header.Set("Last-Event-ID", r.events[0].id)
	rresp, err := http.DefaultClient.Do(resume)
	if err != nil {
		t.Fatal(err)
	}
	rr := decodeHTTP(t, rresp)
	if got := firstText(t, result(t, rr.response(t))); got != "again" {
		t.Errorf("resumed response = %q", got)
	}
}

func TestHTTPDualEraSelection(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	req, h := modernRequest(t, 1, "server/discover", nil, "")
	if res := result(t, post(t, url, req, h).response(t)); res["resultType"] != "complete" {
		t.Errorf("modern discover on dual = %v", res)
	}
	sid := legacyInit(t, url, "2025-11-25", "")
	if sid == "" || len(srv.Sessions()) != 1 {
		t.Errorf("Sessions() = %v", srv.Sessions())
	}
	// Without session or _meta, a dual server reads the request as a
	// malformed modern one: -32602, HTTP 400, the request's id.
	plain, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(3), "tools/list", nil)
	r := post(t, url, plain, nil)
	if resp := r.response(t); r.status != 400 || rpcErr(t, resp).Code != -32602 || resp.ID != jsonrpc.Int64ID(3) {
		t.Errorf("no session, no _meta: %d %s", r.status, r.body)
	}
	// A legacy request with a session id stays legacy.
	if r := post(t, url, plain, legacyHeaders(sid, "2025-11-25")); r.status != 200 {
		t.Errorf("legacy request on a dual server: %d %s", r.status, r.body)
	}
}

func TestHTTPLegacyOnlyRejectsModern(t *testing.T) {
	srv := New(Options{Era: LegacyOnly})
	url := startHTTP(t, srv, srv.Handler())
	req, h := modernRequest(t, 1, "server/discover", nil, "")
	r := post(t, url, req, h)
	if r.status != 400 {
		t.Fatalf("status = %d, want 400", r.status)
	}
	if e := rpcErr(t, r.response(t)); e.Code != -32000 {
		t.Errorf("code = %d, want the non-modern -32000", e.Code)
	}
}
