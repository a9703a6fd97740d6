package protocol

import (
	"encoding/json"
	"fmt"
)

// This file has both tasks designs. The 2025-11-25 core tasks (legacy
// era) come first: task augmentation with params.task, a nested
// CreateTaskResult, tasks/get|result|list|cancel in both directions and
// notifications/tasks/status. The 2026-07-28 tasks extension
// (io.modelcontextprotocol/tasks) follows: a flat CreateTaskResult with
// resultType "task", tasks/get returning a DetailedTask, tasks/update,
// tasks/cancel and notifications/tasks. The two use different field
// names (ttl vs ttlMs, pollInterval vs pollIntervalMs), so they have
// separate types.

// TaskStatus is the state of a task (both designs).
type TaskStatus string

// Task states. Completed, failed and cancelled are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskMetadata is the 2025-11-25 task augmentation param (params.task) of
// tools/call, sampling/createMessage and elicitation/create. TTL is the
// requested retention in milliseconds; nil leaves it to the receiver.
type TaskMetadata struct {
	TTL *int64 `json:"ttl,omitempty"`
}

// RelatedTaskMetadata is the value of the
// io.modelcontextprotocol/related-task _meta key (2025-11-25).
type RelatedTaskMetadata struct {
	TaskID string `json:"taskId"`
}

// Task is a 2025-11-25 core task.
//
// Decoding reads TTL and PollInterval as hints, never failing the task: a
// whole number spelled as a float (60000.0, 6e4) reads as that number,
// one past int64 as its bound, a fraction or a value that is no number as
// nil.
type Task struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTL is the retention in milliseconds from creation; it is
	// required on the wire and nil encodes as null (unlimited).
	TTL *int64 `json:"ttl"`
	// PollInterval is the suggested polling interval in milliseconds.
	PollInterval *int64 `json:"pollInterval,omitempty"`
}

// UnmarshalJSON decodes t as encoding/json decodes its fields, except that
// ttl and pollInterval are read as hints (see [Task]).
func (t *Task) UnmarshalJSON(data []byte) error {
	type plain Task
	w := struct {
		*plain
		TTL          json.RawMessage `json:"ttl"`          // shadows plain's
		PollInterval json.RawMessage `json:"pollInterval"` // shadows plain's
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&t.TTL, w.TTL)
	setHintMs(&t.PollInterval, w.PollInterval)
	return nil
}

// CreateTaskResult is the 2025-11-25 immediate answer to a task-augmented
// request: {task: Task}. _meta may carry
// io.modelcontextprotocol/model-immediate-response. For the 2026
// extension's flat result see [TaskCreatedResult].
type CreateTaskResult struct {
	Task Task `json:"task"`
	Meta Meta `json:"_meta,omitempty"`
}

// TaskIDParams are the params of tasks/get, tasks/result and tasks/cancel
// (2025-11-25), and of tasks/get and tasks/cancel in the 2026 tasks
// extension.
type TaskIDParams struct {
	TaskID string `json:"taskId"`
	Meta   Meta   `json:"_meta,omitempty"`
}

// GetTaskParams are the params of tasks/get (both designs).
type GetTaskParams = TaskIDParams

// CancelTaskParams are the params of tasks/cancel (both designs).
type CancelTaskParams = TaskIDParams

// TaskPayloadParams are the params of the 2025-11-25 tasks/result, whose
// result is exactly the underlying request's result (kept raw by the
// caller).
type TaskPayloadParams = TaskIDParams

// GetTaskResult is the 2025-11-25 result of tasks/get and tasks/cancel:
// the task's fields at the top level, plus _meta.
type GetTaskResult struct {
	Task
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes r as [Task.UnmarshalJSON] decodes its task,
// with _meta: without it, Task's method would decode the whole result
// and drop _meta.
func (r *GetTaskResult) UnmarshalJSON(data []byte) error {
	if err := r.Task.UnmarshalJSON(data); err != nil {
		return err
	}
	w := struct {
		Meta Meta `json:"_meta"`
	}{r.Meta}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	r.Meta = w.Meta
	return nil
}

// CancelTaskResult is the 2025-11-25 result of tasks/cancel.
type CancelTaskResult = GetTaskResult

// TaskStatusParams are the params of the 2025-11-25
// notifications/tasks/status: the task's fields plus _meta.
type TaskStatusParams = GetTaskResult

// ListTasksResult is the 2025-11-25 result of tasks/list. NextCursor is
// nil on the last page.
type ListTasksResult struct {
	Tasks      []Task  `json:"tasks"`
	NextCursor *string `json:"nextCursor,omitempty"`
	Meta       Meta    `json:"_meta,omitempty"`
}

// ExtTask holds the fields every task of the 2026-07-28 tasks extension
// (io.modelcontextprotocol/tasks) carries. It is embedded in
// [TaskCreatedResult] and [DetailedTask].
//
// Decoding a TaskCreatedResult or a DetailedTask reads TTLMs and
// PollIntervalMs as hints, as [Task] reads its ttl and pollInterval.
type ExtTask struct {
	TaskID        string     `json:"taskId"`
	Status        TaskStatus `json:"status"`
	StatusMessage string     `json:"statusMessage,omitempty"`
	// CreatedAt and LastUpdatedAt are ISO 8601 timestamps.
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	// TTLMs is the retention in milliseconds from creation; it is
	// required on the wire and nil encodes as null (unlimited).
	TTLMs *int64 `json:"ttlMs"`
	// PollIntervalMs is the suggested polling interval in milliseconds.
	PollIntervalMs *int64 `json:"pollIntervalMs,omitempty"`
}

// TaskCreatedResult is the tasks extension's CreateTaskResult
// (2026-07-28): a tools/call result with resultType "task" whose task
// fields are flat at the top level. Only valid when the client advertised
// the extension.
type TaskCreatedResult struct {
	ResultType string `json:"resultType"`
	ExtTask
	Meta Meta `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs and pollIntervalMs are read as hints (see [ExtTask]).
func (r *TaskCreatedResult) UnmarshalJSON(data []byte) error {
	type plain TaskCreatedResult
	w := struct {
		*plain
		TTLMs          json.RawMessage `json:"ttlMs"`          // shadows ExtTask's
		PollIntervalMs json.RawMessage `json:"pollIntervalMs"` // shadows ExtTask's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	setHintMs(&r.PollIntervalMs, w.PollIntervalMs)
	return nil
}

// DetailedTask is a task of the tasks extension with its status-specific
// member: the result of tasks/get and the params of notifications/tasks.
//
//   - input_required: InputRequests, answered with tasks/update;
//   - completed: Result, the original method's result object (for
//     tools/call a [CallToolResult], even when isError is true);
//   - failed: Error, a JSON-RPC error object, kept raw and read
//     leniently with [DetailedTask.TaskError].
//
// ResultType is "complete" on tasks/get (some servers send "task") and
// absent on notifications.
type DetailedTask struct {
	ResultType string `json:"resultType,omitempty"`
	ExtTask
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	Result        json.RawMessage         `json:"result,omitempty"`
	Error         json.RawMessage         `json:"error,omitempty"`
	Meta          Meta                    `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes t as encoding/json decodes its fields, except that
// ttlMs and pollIntervalMs are read as hints (see [ExtTask]).
func (t *DetailedTask) UnmarshalJSON(data []byte) error {
	type plain DetailedTask
	w := struct {
		*plain
		TTLMs          json.RawMessage `json:"ttlMs"`          // shadows ExtTask's
		PollIntervalMs json.RawMessage `json:"pollIntervalMs"` // shadows ExtTask's
	}{plain: (*plain)(t)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&t.TTLMs, w.TTLMs)
	setHintMs(&t.PollIntervalMs, w.PollIntervalMs)
	return nil
}

// GetTaskExtResult is the tasks extension's result of tasks/get.
type GetTaskExtResult = DetailedTask

// TasksNotificationParams are the params of the tasks extension's
// notifications/tasks (delivered on subscriptions/listen).
type TasksNotificationParams = DetailedTask

// TaskError reads Error as a JSON-RPC error object. It reports false when
// Error is absent. A value that is not a well-formed error object still
// yields an ErrorObject, with Code 0 and the raw value in Data, so the
// failure is never lost.
func (t *DetailedTask) TaskError() (ErrorObject, bool) {
	if len(t.Error) == 0 || string(t.Error) == "null" {
		return ErrorObject{}, false
	}
	var e ErrorObject
	if err := json.Unmarshal(t.Error, &e); err != nil {
		return ErrorObject{Message: "malformed task error", Data: t.Error}, true
	}
	return e, true
}

// UpdateTaskParams are the params of the tasks extension's tasks/update:
// answers to some or all of an input_required task's inputRequests. The
// result is an [EmptyResult].
type UpdateTaskParams struct {
	TaskID         string         `json:"taskId"`
	InputResponses InputResponses `json:"inputResponses"`
	Meta           Meta           `json:"_meta,omitempty"`
}

// TaskSubscriptionFilter is the tasks extension's addition to a
// [SubscriptionFilter]: the task ids to receive notifications/tasks for.
// SubscriptionFilter has it as TaskIDs.
type TaskSubscriptionFilter struct {
	TaskIDs []string `json:"taskIds,omitempty"`
}

// ErrorObject is a JSON-RPC error object as it appears inside MCP
// payloads (a failed extension task's error). The jsonrpc package's Error
// type is the same shape for the envelope.
type ErrorObject struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// Error implements error.
func (e ErrorObject) Error() string {
	return fmt.Sprintf("protocol: %s (code %d)", e.Message, e.Code)
}

// ServerTasksCapability is the 2025-11-25 server tasks capability, the
// typed form of [ServerCapabilities.Tasks].
type ServerTasksCapability struct {
	List     *Empty `json:"list,omitempty"`
	Cancel   *Empty `json:"cancel,omitempty"`
	Requests *struct {
		Tools *struct {
			Call *Empty `json:"call,omitempty"`
		} `json:"tools,omitempty"`
	} `json:"requests,omitempty"`
}

// ToolCalls reports whether the server accepts task-augmented tools/call.
func (c *ServerTasksCapability) ToolCalls() bool {
	return c != nil && c.Requests != nil && c.Requests.Tools != nil && c.Requests.Tools.Call != nil
}

// TasksCapability decodes the 2025-11-25 tasks capability. It returns nil
// when the server declared none, and an error when the value is not an
// object of the expected shape.
func (c ServerCapabilities) TasksCapability() (*ServerTasksCapability, error) {
	if !present(c.Tasks) {
		return nil, nil
	}
	var t ServerTasksCapability
	if err := json.Unmarshal(c.Tasks, &t); err != nil {
		return nil, fmt.Errorf("protocol: decoding tasks capability: %v", err)
	}
	return &t, nil
}

// MarshalJSON encodes r; an empty ResultType is written as "task".
func (r TaskCreatedResult) MarshalJSON() ([]byte, error) {
	type plain TaskCreatedResult
	if r.ResultType == "" {
		r.ResultType = ResultTypeTask
	}
	return json.Marshal(plain(r))
}
