package testserver

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

const tasksCaps = `{"extensions":{"io.modelcontextprotocol/tasks":{}}}`

func TestModernTasks(t *testing.T) {
	srv := New(Options{})
	defer srv.Close()
	c := newStreamClient(t, srv)
	get := func(id string) map[string]any {
		t.Helper()
		return result(t, c.call("tasks/get", withMeta(map[string]any{"taskId": id}, modernMeta(tasksCaps))))
	}

	t.Run("poll to completion", func(t *testing.T) {
		created := result(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"steps": 2}}, modernMeta(tasksCaps))))
		if created["resultType"] != "task" || created["status"] != "working" || created["pollIntervalMs"] != 10.0 {
			t.Fatalf("task creation = %v", created)
		}
		id := created["taskId"].(string)
		var statuses []string
		var last map[string]any
		for range 5 {
			last = get(id)
			statuses = append(statuses, last["status"].(string))
			if last["status"] == "completed" {
				break
			}
		}
		if d := cmp.Diff([]string{"working", "completed"}, statuses); d != "" {
			t.Errorf("statuses (-want +got):\n%s", d)
		}
		if firstText(t, last["result"].(map[string]any)) != "task "+id+" finished" {
			t.Errorf("task result = %v", last["result"])
		}
	})

	t.Run("input via tasks/update", func(t *testing.T) {
		created := result(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"steps": 1, "input": true}}, modernMeta(tasksCaps))))
		id := created["taskId"].(string)
		got := get(id)
		if got["status"] != "input_required" || got["inputRequests"].(map[string]any)["confirm"] == nil {
			t.Fatalf("tasks/get = %v, want input_required with confirm", got)
		}
		upd := result(t, c.call("tasks/update", withMeta(map[string]any{"taskId": id, "inputResponses": map[string]any{"confirm": map[string]any{"action": "accept", "content": map[string]any{"ok": true}}}}, modernMeta(tasksCaps))))
		if upd["resultType"] != "complete" {
			t.Errorf("tasks/update = %v", upd)
		}
		if got := get(id); got["status"] != "completed" {
			t.Errorf("after update status = %v, want completed", got["status"])
		}
	})

	t.Run("failed and cancelled", func(t *testing.T) {
		created := result(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"steps": 1, "fail": true}}, modernMeta(tasksCaps))))
		if got := get(created["taskId"].(string)); got["status"] != "failed" || got["error"] == nil {
			t.Errorf("failing task = %v, want failed with error", got)
		}
		created = result(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"steps": 5}}, modernMeta(tasksCaps))))
		id := created["taskId"].(string)
		result(t, c.call("tasks/cancel", withMeta(map[string]any{"taskId": id}, modernMeta(tasksCaps))))
		if got := get(id); got["status"] != "cancelled" {
			t.Errorf("cancelled task status = %v", got["status"])
		}
	})

	t.Run("notifications on listen", func(t *testing.T) {
		created := result(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"steps": 1}}, modernMeta(tasksCaps))))
		id := created["taskId"].(string)
		c.request("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"taskIds": []string{id}}}, modernMeta(tasksCaps)))
		if ack := c.next().(*jsonrpc.Request); ack.Method != "notifications/subscriptions/acknowledged" {
			t.Fatalf("first = %s", ack.Method)
		}
		getID := c.request("tasks/get", withMeta(map[string]any{"taskId": id}, modernMeta(tasksCaps)))
		resp, notes := c.await(getID)
		result(t, resp)
		if len(notes) != 1 || notes[0].Method != "notifications/tasks" {
			t.Fatalf("notifications = %v, want one notifications/tasks", notes)
		}
		var p map[string]any
		_ = json.Unmarshal(notes[0].Params, &p)
		if p["taskId"] != id || p["status"] != "completed" {
			t.Errorf("notifications/tasks = %v", p)
		}
		srv.EndListens()
		c.next()
	})

	t.Run("without the extension", func(t *testing.T) {
		res := result(t, c.call("tools/call", withMeta(map[string]any{"name": "task"}, modernMeta(""))))
		if res["resultType"] != "complete" {
			t.Errorf("task without extension resultType = %v, want complete", res["resultType"])
		}
		e := rpcErr(t, c.call("tools/call", withMeta(map[string]any{"name": "task", "arguments": map[string]any{"required": true}}, modernMeta(""))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("required task without extension = %d, want -32021", e.Code)
		}
		e = rpcErr(t, c.call("tasks/get", withMeta(map[string]any{"taskId": "x"}, modernMeta(""))))
		if e.Code != jsonrpc.CodeMissingRequiredClientCapability {
			t.Errorf("tasks/get without extension = %d, want -32021", e.Code)
		}
		e = rpcErr(t, c.call("tasks/get", withMeta(map[string]any{"taskId": "nope"}, modernMeta(tasksCaps))))
		if e.Code != jsonrpc.CodeInvalidParams {
			t.Errorf("unknown task = %d, want -32602", e.Code)
		}
	})
}

func TestLegacyTasks(t *testing.T) {
	srv := New(Options{})
	defer srv.Close()
	c := newStreamClient(t, srv)
	c.initialize("2025-11-25", "")

	list := result(t, c.call("tools/list", nil))
	for _, tool := range list["tools"].([]any) {
		m := tool.(map[string]any)
		if m["name"] == "task" && m["execution"] == nil {
			t.Errorf("2025-11-25 task tool lacks execution.taskSupport")
		}
	}

	created := result(t, c.call("tools/call", map[string]any{"name": "task", "arguments": map[string]any{"steps": 3}, "task": map[string]any{"ttl": 1000}}))
	task := created["task"].(map[string]any)
	id := task["taskId"].(string)
	if task["status"] != "working" || task["pollInterval"] != 10.0 {
		t.Fatalf("CreateTaskResult = %v", created)
	}
	if got := result(t, c.call("tasks/get", map[string]any{"taskId": id})); got["status"] != "working" {
		t.Errorf("tasks/get status = %v, want working", got["status"])
	}
	tasks := result(t, c.call("tasks/list", nil))["tasks"].([]any)
	if len(tasks) != 1 || tasks[0].(map[string]any)["taskId"] != id {
		t.Errorf("tasks/list = %v", tasks)
	}
	res := result(t, c.call("tasks/result", map[string]any{"taskId": id}))
	if firstText(t, res) != "task "+id+" finished" {
		t.Errorf("tasks/result = %v", res)
	}
	if rel := res["_meta"].(map[string]any)["io.modelcontextprotocol/related-task"]; rel.(map[string]any)["taskId"] != id {
		t.Errorf("related-task = %v", rel)
	}
	if e := rpcErr(t, c.call("tasks/cancel", map[string]any{"taskId": id})); e.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("cancel of a completed task = %d, want -32602", e.Code)
	}
	if e := rpcErr(t, c.call("tools/call", map[string]any{"name": "echo", "task": map[string]any{}})); e.Code != jsonrpc.CodeMethodNotFound {
		t.Errorf("task-augmenting echo = %d, want -32601", e.Code)
	}
}
