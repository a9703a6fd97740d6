package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// refuseLoader is the schema compiler's loader: the spec schemas are added
// as resources up front and the JSON Schema meta-schemas are built into
// the library, so any other load (http included) is refused.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("refusing to load %s: tests never fetch schemas", url)
}

// schemaSet compiles definitions out of one schema file.
type schemaSet struct {
	url     string
	defsKey string // "$defs" or "definitions"
	c       *jsonschema.Compiler
	mu      sync.Mutex
}

func loadSchemaSet(t *testing.T, version string) *schemaSet {
	t.Helper()
	path := filepath.Join(specDir, version, "schema.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	top, ok := doc.(map[string]any)
	if !ok {
		t.Fatalf("%s is not a JSON object", path)
	}
	key := "$defs"
	if _, ok := top[key]; !ok {
		key = "definitions"
	}
	url := "file:///spec/" + version + "/schema.json"
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	if err := c.AddResource(url, doc); err != nil {
		t.Fatalf("adding %s: %v", path, err)
	}
	return &schemaSet{url: url, defsKey: key, c: c}
}

func (s *schemaSet) validate(def string, instance []byte) error {
	s.mu.Lock()
	sch, err := s.c.Compile(s.url + "#/" + s.defsKey + "/" + def)
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("compiling %s: %w", def, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("decoding instance: %w", err)
	}
	return sch.Validate(v)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRequest(t *testing.T, id int64, method string, params any) []byte {
	t.Helper()
	req, err := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustNotification(t *testing.T, method string, params any) []byte {
	t.Helper()
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonrpc.EncodeMessage(n)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustResponse(t *testing.T, id int64, result any) []byte {
	t.Helper()
	resp, err := jsonrpc.NewResponse(jsonrpc.Int64ID(id), result)
	if err != nil {
		t.Fatal(err)
	}
	b, err := jsonrpc.EncodeMessage(resp)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func modernMeta(t *testing.T, caps protocol.ClientCapabilities, tok protocol.ProgressToken) protocol.Meta {
	t.Helper()
	m, err := protocol.RequestMeta{
		ProtocolVersion:    protocol.Version20260728,
		ClientCapabilities: caps,
		ClientInfo:         &protocol.Implementation{Name: "conduit-test", Version: "0.0.1"},
		ProgressToken:      tok,
		Extra:              protocol.Meta{"traceparent": json.RawMessage(`"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"`)},
	}.Meta()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func int64p(n int64) *int64       { return &n }
func float64p(f float64) *float64 { return &f }
func intp(n int) *int             { return &n }
func strp(s string) *string       { return &s }

type schemaCase struct {
	name     string
	version  string // folder under spec/
	def      string // definition name
	instance []byte
	wantErr  bool
}

func schemaCases(t *testing.T) []schemaCase {
	weatherSchema := json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)
	tool := protocol.Tool{
		Name:        "get_weather",
		Title:       "Weather",
		Description: "Get the weather",
		InputSchema: weatherSchema,
		Annotations: &protocol.ToolAnnotations{ReadOnlyHint: protocol.Bool(true)},
	}
	legacyTool := tool
	legacyTool.OutputSchema = json.RawMessage(`{"type":"object","properties":{"t":{"type":"number"}}}`)
	taskTool := tool
	taskTool.Execution = &protocol.ToolExecution{TaskSupport: protocol.TaskSupportOptional}
	taskTool.Icons = []protocol.Icon{{Src: "https://example.com/i.png", MimeType: "image/png", Sizes: []string{"48x48"}}}

	form := protocol.ElicitParams{
		Mode:            protocol.ElicitModeForm,
		Message:         "Who are you?",
		RequestedSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","minLength":1}},"required":["name"]}`),
	}
	textResult := protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("22 degrees")}}

	initialize := func(version string, caps protocol.ClientCapabilities, info protocol.Implementation) []byte {
		return mustRequest(t, 1, protocol.MethodInitialize, protocol.InitializeParams{
			ProtocolVersion: version, Capabilities: caps, ClientInfo: info,
		})
	}
	caps0618 := protocol.ClientCapabilities{
		Roots:        &protocol.RootsCapability{ListChanged: true},
		Sampling:     &protocol.SamplingCapability{},
		Elicitation:  &protocol.ElicitationCapability{},
		Experimental: map[string]json.RawMessage{"x.example/feature": json.RawMessage(`{"on":true}`)},
	}
	caps1125 := protocol.ClientCapabilities{
		Roots:       &protocol.RootsCapability{ListChanged: true},
		Sampling:    &protocol.SamplingCapability{Context: &protocol.Empty{}, Tools: &protocol.Empty{}},
		Elicitation: &protocol.ElicitationCapability{Form: &protocol.Empty{}, URL: &protocol.Empty{}},
		Tasks:       &protocol.ClientTasksCapability{List: &protocol.Empty{}, Cancel: &protocol.Empty{}},
	}
	capsModern := protocol.ClientCapabilities{
		Elicitation: &protocol.ElicitationCapability{Form: &protocol.Empty{}, URL: &protocol.Empty{}},
		Sampling:    &protocol.SamplingCapability{Tools: &protocol.Empty{}},
		Roots:       &protocol.RootsCapability{},
		Extensions:  map[string]json.RawMessage{protocol.ExtensionTasks: json.RawMessage(`{}`)},
	}

	elicitReq, err := protocol.NewInputRequest(protocol.MethodElicitationCreate, form)
	if err != nil {
		t.Fatal(err)
	}
	samplingReq, err := protocol.NewInputRequest(protocol.MethodSamplingCreateMessage, protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: mustJSON(t, protocol.TextContent("Capital of France?"))}},
		MaxTokens: 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	rootsReq, err := protocol.NewInputRequest(protocol.MethodRootsList, nil)
	if err != nil {
		t.Fatal(err)
	}
	var responses protocol.InputResponses
	if err := responses.Set("login", protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "octocat"}}); err != nil {
		t.Fatal(err)
	}
	if err := responses.Set("roots", protocol.ListRootsResult{Roots: []protocol.Root{{URI: "file:///home/u", Name: "home"}}}); err != nil {
		t.Fatal(err)
	}

	toolUse := protocol.ToolUseContent("call_1", "get_weather", json.RawMessage(`{"city":"Paris"}`))
	created := "2026-08-01T10:00:00Z"
	extTask := protocol.ExtTask{
		TaskID: "task-1", Status: protocol.TaskWorking, CreatedAt: created, LastUpdatedAt: created,
		TTLMs: int64p(60000), PollIntervalMs: int64p(500),
	}
	completedTask := extTask
	completedTask.Status = protocol.TaskCompleted
	inputTask := extTask
	inputTask.Status = protocol.TaskInputRequired
	inputTask.TTLMs = nil
	failedTask := extTask
	failedTask.Status = protocol.TaskFailed
	legacyTask := protocol.Task{
		TaskID: "t-1", Status: protocol.TaskWorking, CreatedAt: created, LastUpdatedAt: created,
		TTL: int64p(30000), PollInterval: int64p(1000),
	}

	return []schemaCase{
		// 2025-06-18
		{name: "initialize", version: "2025-06-18", def: "InitializeRequest",
			instance: initialize(protocol.Version20250618, caps0618, protocol.Implementation{Name: "c", Version: "1", Title: "C"})},
		{name: "initialize envelope", version: "2025-06-18", def: "JSONRPCRequest",
			instance: initialize(protocol.Version20250618, caps0618, protocol.Implementation{Name: "c", Version: "1"})},
		{name: "tools/call", version: "2025-06-18", def: "CallToolRequest",
			instance: mustRequest(t, 2, protocol.MethodToolsCall, protocol.CallToolParams{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)})},
		{name: "CallToolResult", version: "2025-06-18", def: "CallToolResult",
			instance: mustJSON(t, protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("")}, StructuredContent: json.RawMessage(`{"t":22}`), IsError: protocol.Bool(false)})},
		{name: "ListToolsResult", version: "2025-06-18", def: "ListToolsResult",
			instance: mustJSON(t, protocol.ListToolsResult{Tools: []protocol.Tool{legacyTool}, NextCursor: protocol.Cursor("")})},
		{name: "ElicitResult", version: "2025-06-18", def: "ElicitResult",
			instance: mustJSON(t, protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "a", "ok": true}})},
		{name: "CreateMessageResult", version: "2025-06-18", def: "CreateMessageResult",
			instance: mustJSON(t, protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: mustJSON(t, protocol.TextContent("Paris")), Model: "m", StopReason: "endTurn"})},
		{name: "progress", version: "2025-06-18", def: "ProgressNotification",
			instance: mustNotification(t, protocol.NotificationProgress, protocol.ProgressParams{ProgressToken: json.RawMessage(`7`), Progress: 0.5, Total: float64p(1), Message: "half"})},
		{name: "EnumSchema legacy", version: "2025-06-18", def: "EnumSchema",
			instance: mustJSON(t, protocol.LegacyTitledEnumSchema{Type: "string", Enum: []string{"a", "b"}, EnumNames: []string{"A", "B"}})},
		{name: "elicitation/create form", version: "2025-06-18", def: "ElicitRequest",
			instance: mustJSON(t, func() protocol.InputRequest {
				r, err := protocol.NewInputRequest(protocol.MethodElicitationCreate, protocol.ElicitParams{Message: form.Message, RequestedSchema: form.RequestedSchema})
				if err != nil {
					t.Fatal(err)
				}
				return r
			}())},
		{name: "ping", version: "2025-06-18", def: "PingRequest", instance: mustRequest(t, 8, protocol.MethodPing, nil)},
		{name: "ping result", version: "2025-06-18", def: "JSONRPCResponse", instance: mustResponse(t, 8, protocol.EmptyResult{})},
		{name: "InitializeResult", version: "2025-06-18", def: "InitializeResult",
			instance: mustJSON(t, protocol.InitializeResult{ProtocolVersion: protocol.Version20250618, ServerInfo: protocol.Implementation{Name: "s", Version: "1"},
				Capabilities: protocol.ServerCapabilities{Logging: &protocol.Empty{}, Resources: &protocol.ResourcesCapability{Subscribe: true}}})},
		{name: "ListRootsResult", version: "2025-06-18", def: "ListRootsResult",
			instance: mustJSON(t, protocol.ListRootsResult{Roots: []protocol.Root{{URI: "file:///r"}}})},
		{name: "ReadResourceResult", version: "2025-06-18", def: "ReadResourceResult",
			instance: mustJSON(t, protocol.ReadResourceResult{Contents: []protocol.ResourceContents{{URI: "file:///a", MIMEType: "text/plain"}}})},
		{name: "GetPromptResult", version: "2025-06-18", def: "GetPromptResult",
			instance: mustJSON(t, protocol.GetPromptResult{Messages: []protocol.PromptMessage{{Role: protocol.RoleAssistant, Content: protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a", Name: "a"})}}})},
		{name: "resources/updated", version: "2025-06-18", def: "ResourceUpdatedNotification",
			instance: mustNotification(t, protocol.NotificationResourcesUpdated, protocol.ResourceUpdatedParams{URI: "file:///a"})},
		{name: "roots list_changed", version: "2025-06-18", def: "RootsListChangedNotification",
			instance: mustNotification(t, protocol.NotificationRootsListChanged, protocol.RootsListChangedParams{})},
		{name: "initialized", version: "2025-06-18", def: "InitializedNotification",
			instance: mustNotification(t, protocol.NotificationInitialized, protocol.InitializedParams{})},
		{name: "CallToolResult without content", version: "2025-06-18", def: "CallToolResult",
			instance: []byte(`{"isError":true}`), wantErr: true},

		// 2025-11-25
		{name: "initialize", version: "2025-11-25", def: "InitializeRequest",
			instance: initialize(protocol.Version20251125, caps1125, protocol.Implementation{Name: "c", Version: "1", Description: "d", WebsiteURL: "https://example.com", Icons: []protocol.Icon{{Src: "https://example.com/i.svg"}}})},
		{name: "tools/call task-augmented", version: "2025-11-25", def: "CallToolRequest",
			instance: mustRequest(t, 3, protocol.MethodToolsCall, protocol.CallToolParams{Name: "slow", Task: &protocol.TaskMetadata{TTL: int64p(60000)}})},
		{name: "ListToolsResult", version: "2025-11-25", def: "ListToolsResult",
			instance: mustJSON(t, protocol.ListToolsResult{Tools: []protocol.Tool{taskTool}})},
		{name: "CreateTaskResult", version: "2025-11-25", def: "CreateTaskResult",
			instance: mustJSON(t, protocol.CreateTaskResult{Task: legacyTask})},
		{name: "CreateTaskResult ttl null", version: "2025-11-25", def: "CreateTaskResult",
			instance: mustJSON(t, protocol.CreateTaskResult{Task: protocol.Task{TaskID: "t", Status: protocol.TaskCompleted, CreatedAt: created, LastUpdatedAt: created}})},
		{name: "GetTaskResult", version: "2025-11-25", def: "GetTaskResult",
			instance: mustJSON(t, protocol.GetTaskResult{Task: legacyTask})},
		{name: "ListTasksResult", version: "2025-11-25", def: "ListTasksResult",
			instance: mustJSON(t, protocol.ListTasksResult{Tasks: []protocol.Task{legacyTask}, NextCursor: protocol.Cursor("2")})},
		{name: "tasks/get", version: "2025-11-25", def: "GetTaskRequest",
			instance: mustRequest(t, 4, protocol.MethodTasksGet, protocol.TaskIDParams{TaskID: "t-1"})},
		{name: "task status", version: "2025-11-25", def: "TaskStatusNotification",
			instance: mustNotification(t, protocol.NotificationTasksStatus, protocol.TaskStatusParams{Task: legacyTask})},
		{name: "CreateMessageResult tool_use array", version: "2025-11-25", def: "CreateMessageResult",
			instance: mustJSON(t, protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: mustJSON(t, []protocol.Content{toolUse}), Model: "m", StopReason: "toolUse"})},
		{name: "ElicitResult string array", version: "2025-11-25", def: "ElicitResult",
			instance: mustJSON(t, protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"colors": []string{"red"}}})},
		{name: "elicitation/create URL", version: "2025-11-25", def: "ElicitRequestURLParams",
			instance: mustJSON(t, protocol.ElicitParams{Mode: protocol.ElicitModeURL, Message: "Log in", URL: "https://example.com/login", ElicitationID: "e-1"})},
		{name: "elicitation complete", version: "2025-11-25", def: "ElicitationCompleteNotification",
			instance: mustNotification(t, protocol.NotificationElicitationComplete, protocol.ElicitationCompleteParams{ElicitationID: "e-1"})},
		{name: "cancelled", version: "2025-11-25", def: "CancelledNotification",
			instance: mustNotification(t, protocol.NotificationCancelled, protocol.CancelledParams{RequestID: json.RawMessage(`"req-1"`), Reason: "user"})},
		{name: "completion/complete", version: "2025-11-25", def: "CompleteRequest",
			instance: mustRequest(t, 5, protocol.MethodCompletionComplete, protocol.CompleteParams{Ref: protocol.ResourceTemplateReference("file:///{path}"), Argument: protocol.CompleteArgument{Name: "path", Value: "src/"}, Context: &protocol.CompleteContext{Arguments: map[string]string{"a": "b"}}})},
		{name: "logging/setLevel", version: "2025-11-25", def: "SetLevelRequest",
			instance: mustRequest(t, 6, protocol.MethodLoggingSetLevel, protocol.SetLevelParams{Level: protocol.LevelWarning})},
		{name: "resources/subscribe", version: "2025-11-25", def: "SubscribeRequest",
			instance: mustRequest(t, 7, protocol.MethodResourcesSubscribe, protocol.SubscribeParams{URI: "file:///a"})},
		{name: "TitledMultiSelectEnumSchema", version: "2025-11-25", def: "TitledMultiSelectEnumSchema",
			instance: mustJSON(t, protocol.TitledMultiSelectEnumSchema{Type: "array", Items: protocol.TitledEnumItems{AnyOf: []protocol.EnumOption{{Const: "r", Title: "Red"}}}, MinItems: intp(1), Default: []string{"r"}})},

		// 2026-07-28
		{name: "tools/call with _meta", version: "2026-07-28", def: "CallToolRequest",
			instance: mustRequest(t, 10, protocol.MethodToolsCall, protocol.CallToolParams{
				Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`),
				Meta: modernMeta(t, capsModern, protocol.IntProgressToken(3)),
			})},
		{name: "tools/call MRTR retry", version: "2026-07-28", def: "CallToolRequest",
			instance: mustRequest(t, 11, protocol.MethodToolsCall, protocol.CallToolParams{
				Name: "get_weather", InputResponses: responses, RequestState: strp(""),
				Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{}),
			})},
		{name: "server/discover", version: "2026-07-28", def: "DiscoverRequest",
			instance: mustRequest(t, 12, protocol.MethodDiscover, protocol.DiscoverParams{Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{})})},
		{name: "DiscoverResult", version: "2026-07-28", def: "DiscoverResult",
			instance: mustJSON(t, protocol.DiscoverResult{
				ResultType: protocol.ResultTypeComplete, SupportedVersions: []string{protocol.Version20260728},
				Capabilities: protocol.ServerCapabilities{Tools: &protocol.ToolsCapability{ListChanged: true}, Extensions: map[string]json.RawMessage{protocol.ExtensionTasks: json.RawMessage(`{}`)}},
				TTLMs:        int64p(0), CacheScope: protocol.CacheScopePublic,
			})},
		{name: "DiscoverResultResponse", version: "2026-07-28", def: "DiscoverResultResponse",
			instance: mustResponse(t, 12, protocol.DiscoverResult{ResultType: protocol.ResultTypeComplete, SupportedVersions: []string{protocol.Version20260728}, TTLMs: int64p(1000), CacheScope: protocol.CacheScopePrivate})},
		{name: "InputRequiredResult", version: "2026-07-28", def: "InputRequiredResult",
			instance: mustJSON(t, protocol.InputRequiredResult{
				InputRequests: map[string]protocol.InputRequest{"login": elicitReq, "capital": samplingReq, "roots": rootsReq},
				RequestState:  strp("opaque"),
			})},
		{name: "CallToolResult", version: "2026-07-28", def: "CallToolResult",
			instance: mustJSON(t, protocol.CallToolResult{ResultType: protocol.ResultTypeComplete, Content: textResult.Content, StructuredContent: json.RawMessage(`[1,2]`)})},
		{name: "CallToolResult content kinds", version: "2026-07-28", def: "CallToolResult",
			instance: mustJSON(t, protocol.CallToolResult{ResultType: protocol.ResultTypeComplete, Content: []protocol.Content{
				protocol.ImageContent("iVBORw0KGgo=", "image/png"),
				protocol.AudioContent("UklGRg==", "audio/wav"),
				protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a.txt", Name: "a.txt"}),
				protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///b.txt"}),
			}})},
		{name: "ListToolsResult", version: "2026-07-28", def: "ListToolsResult",
			instance: mustJSON(t, protocol.ListToolsResult{ResultType: protocol.ResultTypeComplete, Tools: []protocol.Tool{tool}, TTLMs: int64p(300000), CacheScope: protocol.CacheScopePublic})},
		{name: "ListToolsResult empty", version: "2026-07-28", def: "ListToolsResult",
			instance: mustJSON(t, protocol.ListToolsResult{ResultType: protocol.ResultTypeComplete, TTLMs: int64p(0), CacheScope: protocol.CacheScopePrivate})},
		{name: "ListToolsResult without ttl", version: "2026-07-28", def: "ListToolsResult",
			instance: mustJSON(t, protocol.ListToolsResult{ResultType: protocol.ResultTypeComplete}), wantErr: true},
		{name: "InputRequests", version: "2026-07-28", def: "InputRequests",
			instance: mustJSON(t, protocol.InputRequests{"login": elicitReq, "roots": rootsReq})},
		{name: "InputResponses", version: "2026-07-28", def: "InputResponses",
			instance: mustJSON(t, responses)},
		{name: "progress", version: "2026-07-28", def: "ProgressNotification",
			instance: mustNotification(t, protocol.NotificationProgress, protocol.ProgressParams{ProgressToken: json.RawMessage(`"tok"`), Progress: 3, Total: float64p(10)})},
		{name: "tools list_changed", version: "2026-07-28", def: "ToolListChangedNotification",
			instance: mustNotification(t, protocol.NotificationToolsListChanged, protocol.ListChangedParams{Meta: protocol.Meta{protocol.MetaSubscriptionID: json.RawMessage(`"l-1"`)}})},
		{name: "log message", version: "2026-07-28", def: "LoggingMessageNotification",
			instance: mustNotification(t, protocol.NotificationMessage, protocol.LoggingMessageParams{Level: protocol.LevelError, Logger: "db", Data: json.RawMessage(`{"e":1}`)})},
		{name: "completion/complete", version: "2026-07-28", def: "CompleteRequest",
			instance: mustRequest(t, 17, protocol.MethodCompletionComplete, protocol.CompleteParams{Ref: protocol.PromptReference("review"), Argument: protocol.CompleteArgument{Name: "lang", Value: "py"}, Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{})})},
		{name: "CreateMessageRequestParams with tools", version: "2026-07-28", def: "CreateMessageRequestParams",
			instance: mustJSON(t, protocol.CreateMessageParams{
				Messages: []protocol.SamplingMessage{
					{Role: protocol.RoleAssistant, Content: mustJSON(t, []protocol.Content{toolUse})},
					{Role: protocol.RoleUser, Content: mustJSON(t, []protocol.Content{protocol.ToolResultContent("call_1", protocol.TextContent("18C"))})},
				},
				Tools: []protocol.Tool{tool}, ToolChoice: &protocol.ToolChoice{Mode: protocol.ToolChoiceAuto}, MaxTokens: 50,
				IncludeContext: protocol.IncludeContextNone,
			})},
		{name: "ElicitResult", version: "2026-07-28", def: "ElicitResult",
			instance: mustJSON(t, protocol.ElicitResult{Action: protocol.ElicitDecline})},
		{name: "CreateMessageResult", version: "2026-07-28", def: "CreateMessageResult",
			instance: mustJSON(t, protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: mustJSON(t, protocol.TextContent("Paris")), Model: "m"})},
		{name: "ElicitRequestFormParams", version: "2026-07-28", def: "ElicitRequestFormParams",
			instance: mustJSON(t, form)},
		{name: "subscriptions/listen", version: "2026-07-28", def: "SubscriptionsListenRequest",
			instance: mustRequest(t, 13, protocol.MethodSubscriptionsListen, protocol.ListenParams{
				Notifications: protocol.SubscriptionFilter{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///a"}},
				Meta:          modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{}),
			})},
		{name: "ListenResult", version: "2026-07-28", def: "SubscriptionsListenResult",
			instance: mustJSON(t, protocol.ListenResult{ResultType: protocol.ResultTypeComplete, Meta: protocol.Meta{protocol.MetaSubscriptionID: json.RawMessage(`13`)}})},
		{name: "prompts/get", version: "2026-07-28", def: "GetPromptRequest",
			instance: mustRequest(t, 14, protocol.MethodPromptsGet, protocol.GetPromptParams{Name: "review", Arguments: map[string]string{"code": "x"}, Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.StringProgressToken("p"))})},
		{name: "GetPromptResult", version: "2026-07-28", def: "GetPromptResult",
			instance: mustJSON(t, protocol.GetPromptResult{ResultType: protocol.ResultTypeComplete, Messages: []protocol.PromptMessage{{Role: protocol.RoleUser, Content: protocol.TextContent("hi")}}})},
		{name: "resources/read", version: "2026-07-28", def: "ReadResourceRequest",
			instance: mustRequest(t, 15, protocol.MethodResourcesRead, protocol.ReadResourceParams{URI: "file:///a", Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{})})},
		{name: "ReadResourceResult", version: "2026-07-28", def: "ReadResourceResult",
			instance: mustJSON(t, protocol.ReadResourceResult{ResultType: protocol.ResultTypeComplete, Contents: []protocol.ResourceContents{{URI: "file:///a", Text: ""}, {URI: "file:///b", Blob: "AAAA"}}, TTLMs: int64p(5), CacheScope: protocol.CacheScopePrivate})},
		{name: "resources/list", version: "2026-07-28", def: "ListResourcesRequest",
			instance: mustRequest(t, 16, protocol.MethodResourcesList, protocol.PaginatedParams{Cursor: protocol.Cursor(""), Meta: modernMeta(t, protocol.ClientCapabilities{}, protocol.ProgressToken{})})},
		{name: "ListResourceTemplatesResult", version: "2026-07-28", def: "ListResourceTemplatesResult",
			instance: mustJSON(t, protocol.ListResourceTemplatesResult{ResultType: protocol.ResultTypeComplete, ResourceTemplates: []protocol.ResourceTemplate{{URITemplate: "file:///{p}", Name: "files"}}, TTLMs: int64p(1), CacheScope: protocol.CacheScopePublic})},
		{name: "ListPromptsResult", version: "2026-07-28", def: "ListPromptsResult",
			instance: mustJSON(t, protocol.ListPromptsResult{ResultType: protocol.ResultTypeComplete, Prompts: []protocol.Prompt{{Name: "p", Arguments: []protocol.PromptArgument{{Name: "a", Required: true}}}}, TTLMs: int64p(1), CacheScope: protocol.CacheScopePublic})},
		{name: "CompleteResult", version: "2026-07-28", def: "CompleteResult",
			instance: mustJSON(t, protocol.CompleteResult{ResultType: protocol.ResultTypeComplete, Completion: protocol.Completion{Values: []string{"a"}, Total: int64p(1), HasMore: protocol.Bool(false)}})},
		{name: "cancelled", version: "2026-07-28", def: "CancelledNotification",
			instance: mustNotification(t, protocol.NotificationCancelled, protocol.CancelledParams{RequestID: json.RawMessage(`10`)})},
		{name: "acknowledged", version: "2026-07-28", def: "SubscriptionsAcknowledgedNotification",
			instance: mustNotification(t, protocol.NotificationSubscriptionsAcknowledged, protocol.SubscriptionsAcknowledgedParams{Notifications: protocol.SubscriptionFilter{PromptsListChanged: true}, Meta: protocol.Meta{protocol.MetaSubscriptionID: json.RawMessage(`"l-1"`)}})},
		{name: "UnsupportedProtocolVersionError", version: "2026-07-28", def: "UnsupportedProtocolVersionError",
			instance: func() []byte {
				e := jsonrpc.ErrUnsupportedProtocolVersion.WithData(protocol.UnsupportedProtocolVersionData{Supported: []string{protocol.Version20260728}, Requested: "1900-01-01"})
				b, err := jsonrpc.EncodeMessage(jsonrpc.NewErrorResponse(jsonrpc.Int64ID(1), e))
				if err != nil {
					t.Fatal(err)
				}
				return b
			}()},
		{name: "StringSchema", version: "2026-07-28", def: "StringSchema",
			instance: mustJSON(t, protocol.StringSchema{Type: "string", Format: protocol.FormatEmail, MinLength: intp(3), Default: strp("a@b.c")})},
		{name: "NumberSchema", version: "2026-07-28", def: "NumberSchema",
			instance: mustJSON(t, protocol.NumberSchema{Type: "integer", Minimum: float64p(0), Maximum: float64p(9), Default: float64p(0)})},
		{name: "BooleanSchema", version: "2026-07-28", def: "BooleanSchema",
			instance: mustJSON(t, protocol.BooleanSchema{Type: "boolean", Default: protocol.Bool(false)})},
		{name: "TitledSingleSelectEnumSchema", version: "2026-07-28", def: "TitledSingleSelectEnumSchema",
			instance: mustJSON(t, protocol.TitledSingleSelectEnumSchema{Type: "string", OneOf: []protocol.EnumOption{{Const: "r", Title: "Red"}}})},
		{name: "UntitledMultiSelectEnumSchema", version: "2026-07-28", def: "UntitledMultiSelectEnumSchema",
			instance: mustJSON(t, protocol.UntitledMultiSelectEnumSchema{Type: "array", Items: protocol.UntitledEnumItems{Type: "string", Enum: []string{"a"}}})},

		// tasks extension (draft)
		{name: "CreateTaskResult", version: "ext-tasks-draft", def: "CreateTaskResult",
			instance: mustJSON(t, protocol.TaskCreatedResult{ResultType: protocol.ResultTypeTask, ExtTask: extTask})},
		{name: "CreateTaskResult ttlMs null", version: "ext-tasks-draft", def: "CreateTaskResult",
			instance: mustJSON(t, protocol.TaskCreatedResult{ResultType: protocol.ResultTypeTask, ExtTask: inputTask})},
		{name: "GetTaskResult completed", version: "ext-tasks-draft", def: "GetTaskResult",
			instance: mustJSON(t, protocol.DetailedTask{ResultType: protocol.ResultTypeComplete, ExtTask: completedTask, Result: mustJSON(t, textResult)})},
		{name: "GetTaskResult input_required", version: "ext-tasks-draft", def: "GetTaskResult",
			instance: mustJSON(t, protocol.DetailedTask{ResultType: protocol.ResultTypeComplete, ExtTask: inputTask, InputRequests: map[string]protocol.InputRequest{"login": elicitReq}})},
		{name: "GetTaskResult failed", version: "ext-tasks-draft", def: "GetTaskResult",
			instance: mustJSON(t, protocol.DetailedTask{ResultType: protocol.ResultTypeComplete, ExtTask: failedTask, Error: mustJSON(t, protocol.ErrorObject{Code: -32603, Message: "boom"})})},
		{name: "GetTaskResult completed without result", version: "ext-tasks-draft", def: "GetTaskResult",
			instance: mustJSON(t, protocol.DetailedTask{ResultType: protocol.ResultTypeComplete, ExtTask: completedTask}), wantErr: true},
		{name: "tasks/update", version: "ext-tasks-draft", def: "UpdateTaskRequest",
			instance: mustRequest(t, 20, protocol.MethodTasksUpdate, protocol.UpdateTaskParams{TaskID: "task-1", InputResponses: responses})},
		{name: "tasks/get", version: "ext-tasks-draft", def: "GetTaskRequest",
			instance: mustRequest(t, 21, protocol.MethodTasksGet, protocol.GetTaskParams{TaskID: "task-1"})},
		{name: "tasks/cancel result", version: "ext-tasks-draft", def: "CancelTaskResult",
			instance: mustJSON(t, protocol.EmptyResult{ResultType: protocol.ResultTypeComplete})},
		{name: "notifications/tasks", version: "ext-tasks-draft", def: "TaskStatusNotification",
			instance: mustNotification(t, protocol.NotificationTasks, protocol.TasksNotificationParams{ExtTask: extTask, Meta: protocol.Meta{protocol.MetaSubscriptionID: json.RawMessage(`"l-1"`)}})},
	}
}

// TestEncodedMessagesMatchSchemas validates messages built from Go values
// against the published JSON schemas of each version.
func TestEncodedMessagesMatchSchemas(t *testing.T) {
	sets := map[string]*schemaSet{}
	for _, tc := range schemaCases(t) {
		set, ok := sets[tc.version]
		if !ok {
			set = loadSchemaSet(t, tc.version)
			sets[tc.version] = set
		}
		t.Run(tc.version+"/"+tc.def+"/"+tc.name, func(t *testing.T) {
			err := set.validate(tc.def, tc.instance)
			if tc.wantErr {
				if err == nil {
					t.Errorf("validate(%s, %s) = nil, want an error", tc.def, tc.instance)
				}
				return
			}
			if err != nil {
				t.Errorf("validate(%s, %s):\n%v", tc.def, tc.instance, err)
			}
		})
	}
}

// TestSchemaLoaderRefusesNetwork checks the compiler set-up: a reference
// to a remote schema fails instead of being fetched.
func TestSchemaLoaderRefusesNetwork(t *testing.T) {
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	doc := map[string]any{"$ref": "https://example.com/remote.json"}
	if err := c.AddResource("file:///remote-ref.json", doc); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Compile("file:///remote-ref.json"); err == nil {
		t.Fatal("Compile of a schema with a remote $ref succeeded, want a refused load")
	}
}
