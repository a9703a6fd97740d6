package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

// TestTasksReadTimingHintsLeniently: a task whose ttl, pollInterval,
// ttlMs or pollIntervalMs is a whole number spelled as a float (60000.0,
// as a server computing it in floating point sends) or a value of the
// wrong type still decodes, with the hints read as cacheable results
// read ttlMs. Such a task used to fail to decode: a 2025-11-25 server's
// CreateTaskResult then read as an empty tool result, the task's answer
// lost without an error, and every tasks/get of either design failed.
func TestTasksReadTimingHintsLeniently(t *testing.T) {
	ptr := func(n int64) *int64 { return &n }
	const fields = `"taskId":"t1","status":"working","createdAt":"c","lastUpdatedAt":"u"`
	meta := protocol.Meta{"k": json.RawMessage(`1`)}
	tests := []struct {
		name, raw string
		into      any
		want      any
	}{
		{"legacy task", `{` + fields + `,"ttl":60000.0,"pollInterval":5e3}`, new(protocol.Task),
			&protocol.Task{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", TTL: ptr(60000), PollInterval: ptr(5000)}},
		{"legacy task with odd hints", `{` + fields + `,"ttl":"60000","pollInterval":2.5}`, new(protocol.Task),
			&protocol.Task{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u"}},
		{"legacy CreateTaskResult", `{"task":{` + fields + `,"ttl":60000.0,"pollInterval":1000},"_meta":{"k":1}}`, new(protocol.CreateTaskResult),
			&protocol.CreateTaskResult{Task: protocol.Task{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", TTL: ptr(60000), PollInterval: ptr(1000)}, Meta: meta}},
		{"legacy tasks/get keeps _meta", `{` + fields + `,"ttl":null,"pollInterval":1000.0,"_meta":{"k":1}}`, new(protocol.GetTaskResult),
			&protocol.GetTaskResult{Task: protocol.Task{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", PollInterval: ptr(1000)}, Meta: meta}},
		{"legacy tasks/list", `{"tasks":[{` + fields + `,"ttl":1e4}],"nextCursor":"n"}`, new(protocol.ListTasksResult),
			&protocol.ListTasksResult{Tasks: []protocol.Task{{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", TTL: ptr(10000)}}, NextCursor: protocol.Cursor("n")}},
		{"extension CreateTaskResult", `{"resultType":"task",` + fields + `,"ttlMs":60000.0,"pollIntervalMs":250.0,"_meta":{"k":1}}`, new(protocol.TaskCreatedResult),
			&protocol.TaskCreatedResult{ResultType: "task", ExtTask: protocol.ExtTask{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", TTLMs: ptr(60000), PollIntervalMs: ptr(250)}, Meta: meta}},
		{"extension tasks/get", `{"resultType":"complete",` + fields + `,"ttlMs":null,"pollIntervalMs":1e3,"inputRequests":{"a":{"method":"roots/list"}},"_meta":{"k":1}}`, new(protocol.DetailedTask),
			&protocol.DetailedTask{ResultType: "complete", ExtTask: protocol.ExtTask{TaskID: "t1", Status: protocol.TaskWorking, CreatedAt: "c", LastUpdatedAt: "u", PollIntervalMs: ptr(1000)},
				InputRequests: map[string]protocol.InputRequest{"a": {Method: "roots/list"}}, Meta: meta}},
	}
	for _, tc := range tests {
		if err := json.Unmarshal([]byte(tc.raw), tc.into); err != nil {
			t.Errorf("%s: Unmarshal(%s): %v", tc.name, tc.raw, err)
			continue
		}
		if diff := cmp.Diff(tc.want, tc.into); diff != "" {
			t.Errorf("%s: Unmarshal(%s) mismatch (-want +got):\n%s", tc.name, tc.raw, diff)
		}
	}
}
