package protocol

import "encoding/json"

// ToolAnnotations are untrusted hints about a tool's behaviour. All
// versions.
type ToolAnnotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
}

// ToolExecution is the 2025-11-25 execution block (taskSupport: one of
// [TaskSupportForbidden], [TaskSupportOptional], [TaskSupportRequired]).
type ToolExecution struct {
	TaskSupport string `json:"taskSupport,omitempty"`
}

// Tool describes a tool. All versions; Title and OutputSchema are
// 2025-06-18 and later, Icons and Execution 2025-11-25. InputSchema and
// OutputSchema are kept raw: the modern era allows any JSON Schema 2020-12
// keyword.
type Tool struct {
	Name         string           `json:"name"`
	Title        string           `json:"title,omitempty"`
	Description  string           `json:"description,omitempty"`
	InputSchema  json.RawMessage  `json:"inputSchema"`
	OutputSchema json.RawMessage  `json:"outputSchema,omitempty"`
	Annotations  *ToolAnnotations `json:"annotations,omitempty"`
	Execution    *ToolExecution   `json:"execution,omitempty"`
	Icons        []Icon           `json:"icons,omitempty"`
	Meta         Meta             `json:"_meta,omitempty"`
}

// Task support values of [ToolExecution.TaskSupport] (2025-11-25).
const (
	TaskSupportForbidden = "forbidden"
	TaskSupportOptional  = "optional"
	TaskSupportRequired  = "required"
)

// ListToolsResult is the result of tools/list. All versions; ResultType,
// TTLMs and CacheScope are 2026-07-28 (cacheable result) and absent from
// legacy servers. NextCursor is nil on the last page; a non-nil "" is
// still a cursor.
type ListToolsResult struct {
	ResultType string  `json:"resultType,omitempty"`
	Tools      []Tool  `json:"tools"`
	NextCursor *string `json:"nextCursor,omitempty"`
	// TTLMs is the freshness hint in milliseconds; nil (absent) and
	// negative values mean 0 (stale at once). Decoding reads it as a
	// hint, never failing the result: a whole number spelled as a float
	// (300000.0, 3e5) reads as that number, one past int64 as its bound,
	// a fraction or a value that is no number as nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is "public" or "private"; anything else means private.
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// CallToolParams are the params of tools/call. All versions.
type CallToolParams struct {
	Name string `json:"name"`
	// Arguments is the arguments object, kept raw so numbers and key
	// order reach the server exactly as given; nil leaves it out.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Task asks for task augmentation (2025-11-25 only; the 2026 tasks
	// extension has no per-request opt-in).
	Task *TaskMetadata `json:"task,omitempty"`
	// InputResponses answers the inputRequests of an earlier
	// input_required result (2026-07-28 MRTR retry).
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState echoes the requestState of an earlier input_required
	// result byte for byte (2026-07-28). nil sends none; a non-nil ""
	// is sent as "".
	RequestState *string `json:"requestState,omitempty"`
	// Meta carries progressToken (all versions) and, in 2026-07-28, the
	// required per-request keys (see [RequestMeta]).
	Meta Meta `json:"_meta,omitempty"`
}

// CallToolResult is the complete result of tools/call. All versions.
//
// StructuredContent is raw: an object in the legacy era, any JSON value
// in 2026-07-28. IsError is a pointer so an explicit false survives a
// round trip; read it with [CallToolResult.Failed].
type CallToolResult struct {
	ResultType        string          `json:"resultType,omitempty"`
	Content           []Content       `json:"content"`
	StructuredContent json.RawMessage `json:"structuredContent,omitempty"`
	// IsError is true when the tool itself failed (its Content says
	// why); nil means false. r.Failed() reads it as a bool.
	IsError *bool `json:"isError,omitempty"`
	Meta    Meta  `json:"_meta,omitempty"`
}

// Failed reports whether the tool reported an error (isError: true).
func (r CallToolResult) Failed() bool { return r.IsError != nil && *r.IsError }

// Text returns the text of r's text blocks, joined by newlines. Other
// block types are skipped.
func (r CallToolResult) Text() string { return joinText(r.Content) }

// MarshalJSON encodes r, writing "content": [] when Content is nil (the
// member is required).
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	type plain CallToolResult
	if r.Content == nil {
		r.Content = []Content{}
	}
	return json.Marshal(plain(r))
}

// Bool returns a pointer to a copy of b, for optional boolean fields such
// as [CallToolResult.IsError].
func Bool(b bool) *bool { return &b }

// MarshalJSON encodes r, writing "tools": [] when Tools is nil.
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type plain ListToolsResult
	if r.Tools == nil {
		r.Tools = []Tool{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [ListToolsResult.TTLMs].
func (r *ListToolsResult) UnmarshalJSON(data []byte) error {
	type plain ListToolsResult
	w := struct {
		*plain
		TTLMs json.RawMessage `json:"ttlMs"` // shadows plain's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	return nil
}

// MarshalJSON encodes t, writing {"type":"object"} when InputSchema is nil
// (the member is required and must be an object schema).
func (t Tool) MarshalJSON() ([]byte, error) {
	type plain Tool
	if len(t.InputSchema) == 0 {
		t.InputSchema = json.RawMessage(`{"type":"object"}`)
	}
	return json.Marshal(plain(t))
}
