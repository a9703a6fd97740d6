package testserver

import (
	"slices"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

func TestConformanceFixtures(t *testing.T) {
	plain := New(Options{})
	defer plain.Close()
	srv := New(Options{Conformance: true})
	defer srv.Close()
	pc := newStreamClient(t, plain)
	c := newStreamClient(t, srv)

	names := func(c *streamClient) []string {
		var out []string
		for _, tool := range result(t, c.call("tools/list", withMeta(nil, modernMeta(""))))["tools"].([]any) {
			out = append(out, tool.(map[string]any)["name"].(string))
		}
		return out
	}
	if slices.Contains(names(pc), "test_simple_text") {
		t.Errorf("fixtures listed without Options.Conformance")
	}
	if !slices.Contains(names(c), "test_simple_text") {
		t.Errorf("fixtures missing with Options.Conformance")
	}

	t.Run("stateless MRTR", func(t *testing.T) {
		caps := `{"elicitation":{}}`
		first := result(t, c.call("tools/call", withMeta(map[string]any{"name": "test_input_required_result_elicitation"}, modernMeta(caps))))
		if first["resultType"] != "input_required" || first["requestState"] != nil {
			t.Fatalf("round 1 = %v, want input_required without requestState", first)
		}
		retry := withMeta(map[string]any{"name": "test_input_required_result_elicitation", "inputResponses": map[string]any{
			"user_name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}, "extra": map[string]any{}}}, modernMeta(caps))
		if got := firstText(t, result(t, c.call("tools/call", retry))); got != "Hello, Ada!" {
			t.Errorf("round 2 = %q", got)
		}
	})
	t.Run("timed task with partial input", func(t *testing.T) {
		created := result(t, c.call("tools/call", withMeta(map[string]any{"name": "multi_input"}, modernMeta(tasksCaps))))
		id := created["taskId"].(string)
		get := func() map[string]any {
			return result(t, c.call("tasks/get", withMeta(map[string]any{"taskId": id}, modernMeta(tasksCaps))))
		}
		if g := get(); g["status"] != "input_required" || len(g["inputRequests"].(map[string]any)) != 2 {
			t.Fatalf("tasks/get = %v", g)
		}
		update := func(key string) {
			result(t, c.call("tasks/update", withMeta(map[string]any{"taskId": id, "inputResponses": map[string]any{key: map[string]any{"action": "accept"}}}, modernMeta(tasksCaps))))
		}
		update("first")
		if g := get(); g["status"] != "input_required" || len(g["inputRequests"].(map[string]any)) != 1 {
			t.Fatalf("after a partial update = %v", g)
		}
		update("second")
		if g := get(); g["status"] != "completed" {
			t.Errorf("after both answers status = %v", g["status"])
		}
	})
	t.Run("required task without the extension", func(t *testing.T) {
		e := rpcErr(t, c.call("tools/call", withMeta(map[string]any{"name": "failing_job"}, modernMeta(""))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("failing_job without extension = %d, want -32021", e.Code)
		}
	})
	t.Run("fixture resources and prompts", func(t *testing.T) {
		res := result(t, c.call("resources/read", withMeta(map[string]any{"uri": "test://template/7/data"}, modernMeta(""))))
		if got := res["contents"].([]any)[0].(map[string]any)["text"]; got != `{"data":"Data for ID: 7","id":"7","templateTest":true}` {
			t.Errorf("template read = %v", got)
		}
		res = result(t, c.call("prompts/get", withMeta(map[string]any{"name": "test_prompt_with_arguments", "arguments": map[string]any{"arg1": "a", "arg2": "b"}}, modernMeta(""))))
		if got := res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"]; got != "Prompt with arguments: arg1='a', arg2='b'" {
			t.Errorf("prompt = %v", got)
		}
	})
}
