package testserver

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

func TestLegacyInitializeVersions(t *testing.T) {
	cases := []struct {
		name      string
		opts      Options
		requested string
		want      string
	}{
		{"newest", Options{}, "2025-11-25", "2025-11-25"},
		{"older echoed", Options{}, "2025-06-18", "2025-06-18"},
		{"unknown gets latest", Options{}, "2024-11-05", "2025-11-25"},
		{"configured", Options{LegacyVersions: []string{"2025-06-18"}}, "2025-11-25", "2025-06-18"},
		{"fault", Options{Faults: []Fault{{Kind: FaultLegacyVersion}}}, "2025-11-25", "2024-11-05"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := New(tc.opts)
			defer srv.Close()
			c := newStreamClient(t, srv)
			res := c.initialize(tc.requested, "")
			if res["protocolVersion"] != tc.want {
				t.Errorf("initialize(%s) protocolVersion = %v, want %s", tc.requested, res["protocolVersion"], tc.want)
			}
			if _, ok := res["resultType"]; ok {
				t.Errorf("legacy result carries resultType")
			}
		})
	}
}

func TestLegacyStream(t *testing.T) {
	srv := New(Options{PageSize: 2})
	defer srv.Close()
	c := newStreamClient(t, srv)
	init := c.initialize("2025-06-18", `{"elicitation":{},"sampling":{},"roots":{"listChanged":true}}`)
	if init["serverInfo"].(map[string]any)["name"] != "conduit-testserver" {
		t.Errorf("serverInfo = %v", init["serverInfo"])
	}

	t.Run("ping", func(t *testing.T) {
		if d := cmp.Diff(map[string]any{}, result(t, c.call("ping", nil))); d != "" {
			t.Errorf("ping (-want +got):\n%s", d)
		}
	})
	t.Run("discover is unknown", func(t *testing.T) {
		if e := rpcErr(t, c.call("server/discover", nil)); e.Code != jsonrpc.CodeMethodNotFound {
			t.Errorf("server/discover code = %d, want -32601", e.Code)
		}
	})
	t.Run("prompts", func(t *testing.T) {
		res := result(t, c.call("prompts/get", map[string]any{"name": "greet", "arguments": map[string]any{"name": "Bob"}}))
		msg := res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]
		if msg != "Hello, Bob!" {
			t.Errorf("greet = %v", msg)
		}
		if e := rpcErr(t, c.call("prompts/get", map[string]any{"name": "greet"})); e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("greet without name = %d", e.Code)
		}
	})
	t.Run("resources", func(t *testing.T) {
		res := result(t, c.call("resources/read", map[string]any{"uri": "file:///logo.png"}))
		if res["contents"].([]any)[0].(map[string]any)["blob"] == nil {
			t.Errorf("logo.png has no blob: %v", res)
		}
		res = result(t, c.call("resources/read", map[string]any{"uri": "file:///src/x.go"}))
		if got := res["contents"].([]any)[0].(map[string]any)["text"]; got != "contents of src/x.go" {
			t.Errorf("template read = %v", got)
		}
		if e := rpcErr(t, c.call("resources/read", map[string]any{"uri": "mem://x"})); e.Code != jsonrpc.CodeResourceNotFound {
			t.Errorf("legacy not found = %d, want -32002", e.Code)
		}
		tl := result(t, c.call("resources/templates/list", nil))
		if len(tl["resourceTemplates"].([]any)) != 1 {
			t.Errorf("templates = %v", tl)
		}
	})
	t.Run("completion", func(t *testing.T) {
		res := result(t, c.call("completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "greet"}, "argument": map[string]any{"name": "name", "value": "al"}}))
		if d := cmp.Diff([]any{"albert", "alice"}, res["completion"].(map[string]any)["values"]); d != "" {
			t.Errorf("completion (-want +got):\n%s", d)
		}
	})
	t.Run("logging", func(t *testing.T) {
		id := c.request("tools/call", map[string]any{"name": "log", "arguments": map[string]any{"level": "info"}})
		if _, notes := c.await(id); len(notes) != 0 {
			t.Errorf("logs before setLevel: %v", notes)
		}
		result(t, c.call("logging/setLevel", map[string]any{"level": "info"}))
		id = c.request("tools/call", map[string]any{"name": "log", "arguments": map[string]any{"level": "warning", "message": "w"}})
		_, notes := c.await(id)
		if len(notes) != 1 || notes[0].Method != "notifications/message" {
			t.Fatalf("notes = %v, want one notifications/message", notes)
		}
	})
	t.Run("server-to-client requests", func(t *testing.T) {
		cases := []struct {
			tool, method string
			answer       any
			want         string
		}{
			{"ask_user", "elicitation/create", map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "Hello, Ada!"},
			{"sample", "sampling/createMessage", map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "Paris"}, "model": "m"}, "m said: Paris"},
			{"roots", "roots/list", map[string]any{"roots": []any{map[string]any{"uri": "file:///r"}}}, "file:///r"},
		}
		for _, tc := range cases {
			id := c.request("tools/call", map[string]any{"name": tc.tool})
			sreq, ok := c.next().(*jsonrpc.Request)
			if !ok || sreq.Method != tc.method || sreq.IsNotification() {
				t.Fatalf("%s: server sent %+v, want a %s request", tc.tool, sreq, tc.method)
			}
			resp, _ := jsonrpc.NewResponse(sreq.ID, tc.answer)
			c.send(resp)
			final, _ := c.await(id)
			if got := firstText(t, result(t, final)); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.tool, got, tc.want)
			}
		}
		// A client error answer becomes the tool call's error.
		id := c.request("tools/call", map[string]any{"name": "sample"})
		sreq := c.next().(*jsonrpc.Request)
		c.send(jsonrpc.NewErrorResponse(sreq.ID, jsonrpc.NewError(-1, "User rejected sampling request")))
		final, _ := c.await(id)
		if e := rpcErr(t, final); e.Code != -1 {
			t.Errorf("rejected sampling code = %d, want -1", e.Code)
		}
	})
	t.Run("subscriptions and list_changed", func(t *testing.T) {
		result(t, c.call("resources/subscribe", map[string]any{"uri": "file:///hello.txt"}))
		srv.NotifyResourceUpdated("file:///other.txt")
		srv.NotifyResourceUpdated("file:///hello.txt")
		srv.NotifyToolsChanged()
		for _, want := range []string{"notifications/resources/updated", "notifications/tools/list_changed"} {
			n := c.next().(*jsonrpc.Request)
			if n.Method != want {
				t.Errorf("notification = %s, want %s", n.Method, want)
			}
		}
		result(t, c.call("resources/unsubscribe", map[string]any{"uri": "file:///hello.txt"}))
		srv.NotifyResourceUpdated("file:///hello.txt")
		result(t, c.call("ping", nil)) // fails on an unexpected message first
	})
	t.Run("cancel", func(t *testing.T) {
		id := c.request("tools/call", map[string]any{"name": "slow", "arguments": map[string]any{"steps": 1, "delayMs": 60000}})
		c.notify("notifications/cancelled", map[string]any{"requestId": id.Raw(), "reason": "test"})
		ctx, cancel := context.WithTimeout(context.Background(), watchdog)
		defer cancel()
		if _, err := srv.WaitReceived(ctx, "notifications/cancelled"); err != nil {
			t.Fatal(err)
		}
		// The slow call (a minute long) ends now, without an answer.
		if err := srv.WaitIdle(ctx); err != nil {
			t.Fatalf("WaitIdle after the cancellation: %v", err)
		}
		result(t, c.call("ping", nil)) // fails if the cancelled call answered first
	})
	t.Run("records", func(t *testing.T) {
		var got []string
		for _, r := range srv.Received()[:3] {
			got = append(got, r.Transport+" "+r.Method)
		}
		want := []string{"stdio initialize", "stdio notifications/initialized", "stdio ping"}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("records (-want +got):\n%s", d)
		}
		var p map[string]any
		_ = json.Unmarshal(srv.Received()[0].Params, &p)
		if p["protocolVersion"] != "2025-06-18" {
			t.Errorf("recorded initialize params = %v", p)
		}
	})
}

func TestLegacyOnlyStream(t *testing.T) {
	srv := New(Options{Era: LegacyOnly})
	defer srv.Close()
	c := newStreamClient(t, srv)
	if e := rpcErr(t, c.call("server/discover", withMeta(nil, modernMeta("")))); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("legacy-only server/discover = %d, want -32601", e.Code)
	}
	res := c.initialize("2025-11-25", "")
	if res["protocolVersion"] != "2025-11-25" {
		t.Errorf("initialize = %v", res)
	}
}

func TestModernOnlyStream(t *testing.T) {
	srv := New(Options{Era: ModernOnly})
	defer srv.Close()
	c := newStreamClient(t, srv)
	e := rpcErr(t, c.call("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "x", "version": "1"}}))
	if e.Code != jsonrpc.CodeMethodNotFound || string(e.Data) != `{"supported":["2026-07-28"]}` {
		t.Errorf("modern-only initialize = %v, want -32601 naming the supported versions", e)
	}
}
