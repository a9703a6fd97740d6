package testserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

func TestModernStreamBasics(t *testing.T) {
	srv := New(Options{Instructions: "hi", TTL: 1500 * 1e6})
	defer srv.Close()
	c := newStreamClient(t, srv)

	t.Run("discover", func(t *testing.T) {
		res := result(t, c.call("server/discover", withMeta(nil, modernMeta(""))))
		got := map[string]any{
			"resultType":        res["resultType"],
			"supportedVersions": res["supportedVersions"],
			"instructions":      res["instructions"],
			"ttlMs":             res["ttlMs"],
			"cacheScope":        res["cacheScope"],
			"serverInfo":        res["_meta"].(map[string]any)["io.modelcontextprotocol/serverInfo"],
			"tasksExt":          res["capabilities"].(map[string]any)["extensions"],
		}
		want := map[string]any{
			"resultType":        "complete",
			"supportedVersions": []any{"2026-07-28"},
			"instructions":      "hi",
			"ttlMs":             1500.0,
			"cacheScope":        "public",
			"serverInfo":        map[string]any{"name": "conduit-testserver", "version": "0.1.0"},
			"tasksExt":          map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("server/discover (-want +got):\n%s", d)
		}
	})

	t.Run("add", func(t *testing.T) {
		res := result(t, c.call("tools/call", withMeta(map[string]any{"name": "add", "arguments": map[string]any{"a": 2, "b": 3}}, modernMeta(""))))
		if d := cmp.Diff(map[string]any{"sum": 5.0}, res["structuredContent"]); d != "" {
			t.Errorf("add structuredContent (-want +got):\n%s", d)
		}
		if res["resultType"] != "complete" {
			t.Errorf("resultType = %v, want complete", res["resultType"])
		}
		if _, ok := res["ttlMs"]; ok {
			t.Errorf("tools/call result has ttlMs; only cacheable results may")
		}
	})

	errCases := []struct {
		name   string
		method string
		params any
		code   int64
	}{
		{"unknown method", "nope/nothing", withMeta(nil, modernMeta("")), jsonrpc.CodeMethodNotFound},
		{"ping is legacy", "ping", withMeta(nil, modernMeta("")), jsonrpc.CodeMethodNotFound},
		{"missing caps", "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": modernVersion}}, jsonrpc.CodeInvalidParams},
		{"bad version", "tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}, jsonrpc.CodeUnsupportedProtocolVersion},
		{"unknown tool", "tools/call", withMeta(map[string]any{"name": "zzz"}, modernMeta("")), jsonrpc.CodeInvalidParams},
		{"bad log level", "tools/list", withMeta(nil, map[string]any{"io.modelcontextprotocol/protocolVersion": modernVersion, "io.modelcontextprotocol/clientCapabilities": map[string]any{}, "io.modelcontextprotocol/logLevel": "loud"}), jsonrpc.CodeInvalidParams},
		{"bad cursor", "tools/list", withMeta(map[string]any{"cursor": "!!"}, modernMeta("")), jsonrpc.CodeInvalidParams},
		{"resource not found", "resources/read", withMeta(map[string]any{"uri": "mem://none"}, modernMeta("")), jsonrpc.CodeInvalidParams},
		{"rpc_error tool", "tools/call", withMeta(map[string]any{"name": "rpc_error", "arguments": map[string]any{"code": -32000}}, modernMeta("")), -32000},
	}
	for _, tc := range errCases {
		t.Run(tc.name, func(t *testing.T) {
			e := rpcErr(t, c.call(tc.method, tc.params))
			if e.Code != tc.code {
				t.Errorf("%s: code = %d, want %d", tc.method, e.Code, tc.code)
			}
		})
	}

	t.Run("-32022 data", func(t *testing.T) {
		e := rpcErr(t, c.call("tools/list", map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/protocolVersion": "1900-01-01", "io.modelcontextprotocol/clientCapabilities": map[string]any{}}}))
		var data map[string]any
		_ = json.Unmarshal(e.Data, &data)
		want := map[string]any{"supported": []any{"2026-07-28"}, "requested": "1900-01-01"}
		if d := cmp.Diff(want, data); d != "" {
			t.Errorf("-32022 data (-want +got):\n%s", d)
		}
	})

	t.Run("fail is a tool error", func(t *testing.T) {
		res := result(t, c.call("tools/call", withMeta(map[string]any{"name": "fail"}, modernMeta(""))))
		if res["isError"] != true {
			t.Errorf("fail isError = %v, want true", res["isError"])
		}
	})

	t.Run("progress and logs", func(t *testing.T) {
		meta := modernMeta("")
		meta["progressToken"] = "tok"
		meta["io.modelcontextprotocol/logLevel"] = "debug"
		id := c.request("tools/call", withMeta(map[string]any{"name": "slow", "arguments": map[string]any{"steps": 3}}, meta))
		resp, notes := c.await(id)
		if firstText(t, result(t, resp)) != "done after 3 steps" {
			t.Errorf("slow result = %s", resp.Result)
		}
		var methods []string
		for _, n := range notes {
			methods = append(methods, n.Method)
		}
		want := []string{"notifications/progress", "notifications/message", "notifications/progress", "notifications/message", "notifications/progress", "notifications/message"}
		if d := cmp.Diff(want, methods); d != "" {
			t.Errorf("notifications (-want +got):\n%s", d)
		}
	})

	t.Run("no logs without logLevel", func(t *testing.T) {
		id := c.request("tools/call", withMeta(map[string]any{"name": "log", "arguments": map[string]any{"level": "error"}}, modernMeta("")))
		_, notes := c.await(id)
		if len(notes) != 0 {
			t.Errorf("notifications without logLevel = %v, want none", notes)
		}
	})
}

func TestModernPagination(t *testing.T) {
	srv := New(Options{PageSize: 2})
	defer srv.Close()
	c := newStreamClient(t, srv)
	var names []string
	cursor := ""
	for page := 0; page < 50; page++ {
		p := map[string]any{}
		if cursor != "" {
			p["cursor"] = cursor
		}
		res := result(t, c.call("tools/list", withMeta(p, modernMeta(""))))
		for _, tool := range res["tools"].([]any) {
			names = append(names, tool.(map[string]any)["name"].(string))
		}
		next, ok := res["nextCursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	if d := cmp.Diff(ToolNames(), names); d != "" {
		t.Errorf("paged tools (-want +got):\n%s", d)
	}
}

func TestMRTR(t *testing.T) {
	srv := New(Options{})
	defer srv.Close()
	c := newStreamClient(t, srv)
	caps := `{"elicitation":{},"sampling":{},"roots":{}}`

	first := func(t *testing.T, tool string) map[string]any {
		t.Helper()
		res := result(t, c.call("tools/call", withMeta(map[string]any{"name": tool}, modernMeta(caps))))
		if res["resultType"] != "input_required" {
			t.Fatalf("%s first round resultType = %v, want input_required", tool, res["resultType"])
		}
		if _, ok := res["ttlMs"]; ok {
			t.Errorf("input_required result carries ttlMs")
		}
		return res
	}

	cases := []struct {
		tool     string
		key      string
		response any
		want     string
	}{
		{"ask_user", "user", map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "Hello, Ada!"},
		{"sample", "model", map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m1"}, "m1 said: Paris"},
		{"roots", "roots", map[string]any{"roots": []any{map[string]any{"uri": "file:///a"}, map[string]any{"uri": "file:///b"}}}, "file:///a\nfile:///b"},
	}
	for _, tc := range cases {
		t.Run(tc.tool, func(t *testing.T) {
			res := first(t, tc.tool)
			reqs := res["inputRequests"].(map[string]any)
			if _, ok := reqs[tc.key]; !ok || len(reqs) != 1 {
				t.Fatalf("inputRequests = %v, want one key %q", reqs, tc.key)
			}
			state := res["requestState"].(string)
			if !srv.VerifyRequestState(state) {
				t.Errorf("VerifyRequestState(%q) = false", state)
			}
			retry := withMeta(map[string]any{"name": tc.tool, "requestState": state,
				"inputResponses": map[string]any{tc.key: tc.response}}, modernMeta(caps))
			final := result(t, c.call("tools/call", retry))
			if final["resultType"] != "complete" || firstText(t, final) != tc.want {
				t.Errorf("%s retry = %v, want complete %q", tc.tool, final, tc.want)
			}

			// A retry without the responses is asked again.
			again := result(t, c.call("tools/call", withMeta(map[string]any{"name": tc.tool, "requestState": state}, modernMeta(caps))))
			if again["resultType"] != "input_required" {
				t.Errorf("retry without responses resultType = %v, want input_required", again["resultType"])
			}

			// A tampered requestState is rejected.
			bad := withMeta(map[string]any{"name": tc.tool, "requestState": state + "x",
				"inputResponses": map[string]any{tc.key: tc.response}}, modernMeta(caps))
			if e := rpcErr(t, c.call("tools/call", bad)); e.Code != jsonrpc.CodeInvalidParams {
				t.Errorf("tampered requestState code = %d, want -32602", e.Code)
			}
		})
	}

	t.Run("state of another tool", func(t *testing.T) {
		state := first(t, "ask_user")["requestState"].(string)
		p := withMeta(map[string]any{"name": "sample", "requestState": state, "inputResponses": map[string]any{"model": map[string]any{}}}, modernMeta(caps))
		if e := rpcErr(t, c.call("tools/call", p)); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("cross-tool requestState code = %d, want -32602", e.Code)
		}
	})

	t.Run("missing capability", func(t *testing.T) {
		e := rpcErr(t, c.call("tools/call", withMeta(map[string]any{"name": "ask_user"}, modernMeta(""))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability || !strings.Contains(string(e.Data), `"elicitation"`) {
			t.Errorf("ask_user without caps = %v, want -32021 naming elicitation", e)
		}
		e = rpcErr(t, c.call("tools/call", withMeta(map[string]any{"name": "ask_url"}, modernMeta(`{"elicitation":{"form":{}}}`))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("ask_url with form only = %v, want -32021", e)
		}
	})

	t.Run("load shedding", func(t *testing.T) {
		res := result(t, c.call("tools/call", withMeta(map[string]any{"name": "load_shed"}, modernMeta(""))))
		if res["resultType"] != "input_required" || res["inputRequests"] != nil || res["requestState"] == nil {
			t.Fatalf("load_shed first = %v, want requestState only", res)
		}
		final := result(t, c.call("tools/call", withMeta(map[string]any{"name": "load_shed", "requestState": res["requestState"]}, modernMeta(""))))
		if firstText(t, final) != "served after load shedding" {
			t.Errorf("load_shed retry = %v", final)
		}
	})
}

func TestListenStream(t *testing.T) {
	srv := New(Options{})
	defer srv.Close()
	c := newStreamClient(t, srv)

	filter := map[string]any{"toolsListChanged": true, "resourceSubscriptions": []string{"file:///dir"}}
	id := c.request("subscriptions/listen", withMeta(map[string]any{"notifications": filter}, modernMeta("")))
	ack := c.next().(*jsonrpc.Request)
	if ack.Method != "notifications/subscriptions/acknowledged" {
		t.Fatalf("first message = %s, want the acknowledgement", ack.Method)
	}
	var ap struct {
		Notifications map[string]any             `json:"notifications"`
		Meta          map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(ack.Params, &ap)
	if d := cmp.Diff(map[string]any{"toolsListChanged": true, "resourceSubscriptions": []any{"file:///dir"}}, ap.Notifications); d != "" {
		t.Errorf("ack notifications (-want +got):\n%s", d)
	}
	if got := string(ap.Meta["io.modelcontextprotocol/subscriptionId"]); got != "1" {
		t.Errorf("ack subscriptionId = %s, want 1", got)
	}
	if srv.Listens() != 1 {
		t.Errorf("Listens() = %d, want 1", srv.Listens())
	}

	srv.NotifyPromptsChanged() // not subscribed: nothing
	srv.NotifyToolsChanged()
	srv.NotifyResourceUpdated("file:///other")
	srv.NotifyResourceUpdated("file:///dir/a.txt")
	for _, want := range []string{"notifications/tools/list_changed", "notifications/resources/updated"} {
		n := c.next().(*jsonrpc.Request)
		if n.Method != want {
			t.Errorf("notification = %s, want %s", n.Method, want)
		}
		if !strings.Contains(string(n.Params), `"io.modelcontextprotocol/subscriptionId":1`) {
			t.Errorf("%s params %s lack the subscriptionId", n.Method, n.Params)
		}
	}

	srv.EndListens()
	resp := c.next().(*jsonrpc.Response)
	res := result(t, resp)
	if resp.ID != id || res["resultType"] != "complete" || res["_meta"].(map[string]any)["io.modelcontextprotocol/subscriptionId"] != 1.0 {
		t.Errorf("listen end = %s, want complete with subscriptionId 1", resp.Result)
	}

	t.Run("cancelled", func(t *testing.T) {
		id := c.request("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"promptsListChanged": true}}, modernMeta("")))
		c.next() // ack
		c.notify("notifications/cancelled", map[string]any{"requestId": id.Raw()})
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		if _, err := srv.WaitReceived(ctx, "notifications/cancelled"); err != nil {
			t.Fatal(err)
		}
		if err := srv.WaitIdle(ctx); err != nil || srv.Listens() != 0 {
			t.Fatalf("after cancelling the listen: WaitIdle = %v, Listens() = %d", err, srv.Listens())
		}
		// The listen ended without a response; a later request still works.
		resp := c.call("tools/list", withMeta(nil, modernMeta("")))
		result(t, resp)
	})

	t.Run("taskIds need the extension", func(t *testing.T) {
		e := rpcErr(t, c.call("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{"x"}}}, modernMeta(""))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("taskIds without extension code = %d, want -32021", e.Code)
		}
	})
}
