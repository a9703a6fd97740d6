package scenarios

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

const metaNS = "io.modelcontextprotocol/"

// gauntletProblems are the per-request obligations the stateless gauntlet
// (src/scenarios/client/stateless-gauntlet.ts: headerProblems,
// draftProblems) checks on every POST before dispatch.
func gauntletProblems(r *http.Request, method string, params map[string]json.RawMessage) []string {
	var p []string
	if a := r.Header.Get("Accept"); !strings.Contains(a, "application/json") || !strings.Contains(a, "text/event-stream") {
		p = append(p, "Accept must list application/json and text/event-stream: "+a)
	}
	if !strings.Contains(r.Header.Get("Content-Type"), "application/json") {
		p = append(p, "Content-Type must be application/json")
	}
	var meta map[string]json.RawMessage
	json.Unmarshal(params["_meta"], &meta)
	hv := r.Header.Get("MCP-Protocol-Version")
	if hv != "2026-07-28" {
		p = append(p, "MCP-Protocol-Version header must be a known version: "+hv)
	}
	for _, f := range []string{"protocolVersion", "clientInfo", "clientCapabilities"} {
		if meta[metaNS+f] == nil {
			p = append(p, "_meta must carry "+metaNS+f)
		}
	}
	if mv := string(meta[metaNS+"protocolVersion"]); mv != "" && mv != `"`+hv+`"` {
		p = append(p, "the header version must match _meta's "+mv)
	}
	if r.Header.Get("Mcp-Method") != method {
		p = append(p, "Mcp-Method must equal the body method: "+r.Header.Get("Mcp-Method"))
	}
	if method == protocol.MethodToolsCall {
		var name string
		json.Unmarshal(params["name"], &name)
		if r.Header.Get("Mcp-Name") != name {
			p = append(p, "Mcp-Name must equal params.name: "+r.Header.Get("Mcp-Name"))
		}
	}
	return p
}

// TestStatelessGauntlet mirrors the stateless gauntlet
// (src/scenarios/client/stateless-gauntlet.ts): one stateless server
// that judges every request on its own — headers, the _meta envelope,
// routing headers — and whose tools check their arguments (a string, a
// JSON number, a same-document $ref) and the MRTR round trip (listed
// only for a client declaring elicitation). The contract: list the
// tools, call each with valid arguments; nothing may fail.
func TestStatelessGauntlet(t *testing.T) {
	var mu sync.Mutex
	var problems []string
	state := base64.RawURLEncoding.EncodeToString([]byte(`{"tool":"mrtr_confirm","nonce":"gauntlet-mrtr-v1"}`))
	validate := map[string]any{"name": "validate_arguments", "inputSchema": map[string]any{
		"type": "object", "required": []string{"message", "count", "payload"},
		"properties": map[string]any{"message": map[string]any{"type": "string"}, "count": map[string]any{"type": "number"},
			"payload": map[string]any{"$ref": "#/$defs/payload"}},
		"$defs": map[string]any{"payload": map[string]any{"type": "object", "required": []string{"kind"},
			"properties": map[string]any{"kind": map[string]any{"type": "string", "enum": []string{"solid", "liquid"}}}}}}}
	mrtr := map[string]any{"name": "mrtr_confirm", "inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var m struct {
			Method string                     `json:"method"`
			ID     json.RawMessage            `json:"id"`
			Params map[string]json.RawMessage `json:"params"`
		}
		json.Unmarshal(body, &m)
		if m.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		if p := gauntletProblems(r, m.Method, m.Params); len(p) > 0 {
			mu.Lock()
			problems = append(problems, m.Method+": "+strings.Join(p, "; "))
			mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32600, "message": strings.Join(p, "; ")}})
			return
		}
		switch m.Method {
		case "server/discover":
			discover(w, m.ID, map[string]any{"tools": map[string]any{}})
		case protocol.MethodToolsList:
			var meta map[string]json.RawMessage
			json.Unmarshal(m.Params["_meta"], &meta)
			var caps map[string]json.RawMessage
			json.Unmarshal(meta[metaNS+"clientCapabilities"], &caps)
			tools := []any{validate, map[string]any{"name": "elicitation_missing", "inputSchema": map[string]any{"type": "object"}}}
			if caps["elicitation"] != nil {
				tools[1] = mrtr
			}
			reply(w, m.ID, complete(map[string]any{"tools": tools}))
		case protocol.MethodToolsCall:
			reply(w, m.ID, gauntletTool(m.Params, state, &mu, &problems))
		default:
			reply(w, m.ID, complete(map[string]any{}))
		}
	}))
	t.Cleanup(srv.Close)
	h := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"confirmed": true}}, nil
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, srv.URL, client.WithProtocol(client.Auto), client.WithHandler(h))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	args := map[string]any{"validate_arguments": map[string]any{"message": "hi", "count": 3, "payload": map[string]any{"kind": "solid"}}}
	called := 0
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			t.Fatalf("Tools: %v", err)
		}
		res, err := c.CallTool(ctx, tool.Name, args[tool.Name])
		if err != nil || (res.IsError != nil && *res.IsError) {
			t.Errorf("gauntlet-%s: %v %+v", tool.Name, err, res)
		}
		called++
	}
	mu.Lock()
	defer mu.Unlock()
	check(t, "gauntlet-tools", called == 2, "called %d tools, want validate_arguments and mrtr_confirm", called)
	check(t, "gauntlet-requests", len(problems) == 0, "non-conformant requests: %v", problems)
}

// gauntletTool runs validate_arguments and mrtr_confirm.
func gauntletTool(params map[string]json.RawMessage, state string, mu *sync.Mutex, problems *[]string) map[string]any {
	var name string
	json.Unmarshal(params["name"], &name)
	fail := func(why string) map[string]any {
		mu.Lock()
		*problems = append(*problems, name+": "+why)
		mu.Unlock()
		return complete(map[string]any{"isError": true, "content": []any{map[string]any{"type": "text", "text": "CONFORMANCE FAIL: " + why}}})
	}
	ok := complete(map[string]any{"content": []any{map[string]any{"type": "text", "text": "CONFORMANCE OK"}}})
	switch name {
	case "validate_arguments":
		var a struct {
			Message *string         `json:"message"`
			Count   json.RawMessage `json:"count"`
			Payload struct {
				Kind string `json:"kind"`
			} `json:"payload"`
		}
		json.Unmarshal(params["arguments"], &a)
		var n float64
		if a.Message == nil || json.Unmarshal(a.Count, &n) != nil || (a.Payload.Kind != "solid" && a.Payload.Kind != "liquid") {
			return fail("arguments do not honour the inputSchema: " + string(params["arguments"]))
		}
		return ok
	case "mrtr_confirm":
		if params["inputResponses"] == nil {
			return map[string]any{"resultType": "input_required", "requestState": state, "inputRequests": map[string]any{"confirm": map[string]any{
				"method": "elicitation/create", "params": map[string]any{"message": "Confirm?", "requestedSchema": map[string]any{
					"type": "object", "properties": map[string]any{"confirmed": map[string]any{"type": "boolean"}}}}}}}
		}
		if string(params["requestState"]) != `"`+state+`"` {
			return fail("requestState not echoed unchanged: " + string(params["requestState"]))
		}
		return ok
	}
	return fail("unknown tool")
}
