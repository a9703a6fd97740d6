package einoconduit_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	einoconduit "github.com/conduitmcp/conduit/adapters/eino"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// modelCalls are the calls the scripted model makes in its first turn:
// tools of both servers, a tool error, arguments cut short and a name
// that does not exist.
var modelCalls = [][3]string{
	{"call_1", "modern__echo", `{"text":"hi"}`},
	{"call_2", "legacy__add", `{"a":19,"b":23}`},
	{"call_3", "modern__fail", `{"message":"boom"}`},
	{"call_4", "legacy__echo", `{"text":"cut sh`},
}

// wantResults are what the model must read back for each call.
var wantResults = map[string]string{
	"call_1": "hi", "call_2": "42", "call_3": "The tool reported an error:\n", "call_4": "cut short",
}

// scriptedModel is an Eino chat model that asks for modelCalls, then
// answers; it records the tools it was given and the messages it read.
type scriptedModel struct {
	calls  [][3]string // modelCalls when nil
	mu     sync.Mutex
	tools  []*schema.ToolInfo
	inputs [][]*schema.Message
}

func (m *scriptedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tools = tools
	return m, nil
}

func (m *scriptedModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.inputs = append(m.inputs, input)
	if len(m.inputs) == 1 {
		var calls []schema.ToolCall
		script := m.calls
		if script == nil {
			script = modelCalls
		}
		for _, c := range script {
			calls = append(calls, schema.ToolCall{ID: c[0], Type: "function", Function: schema.FunctionCall{Name: c[1], Arguments: c[2]}})
		}
		return schema.AssistantMessage("", calls), nil
	}
	return schema.AssistantMessage("The answer is 42.", nil), nil
}

func (m *scriptedModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("scripted model: no streaming")
}

// TestReActAgentOnTheWire runs Eino's ReAct agent with MCP tools of real
// servers of both eras: the model is given declarations that pass each
// dialect's rules, the servers run what it asked, and it reads the
// results back.
func TestReActAgentOnTheWire(t *testing.T) {
	servers := toolsettest.StartServers(t)
	for _, d := range []toolset.Dialect{toolset.OpenAI, toolset.OpenAIStrict, toolset.AnthropicStrict, toolset.GeminiJSONSchema} {
		t.Run(d.String(), func(t *testing.T) {
			servers.Modern.Reset()
			ctx := testContext(t)
			set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
			if err != nil {
				t.Fatal(err)
			}
			tools, err := einoconduit.Tools(set, &einoconduit.Options{Dialect: d})
			if err != nil {
				t.Fatal(err)
			}
			m := &scriptedModel{}
			agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m, ToolsConfig: compose.ToolsNodeConfig{Tools: tools}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("What is 19+23?")})
			if err != nil {
				t.Fatal(err)
			}
			if out.Content != "The answer is 42." {
				t.Errorf("answer %q", out.Content)
			}
			checkDeclared(t, m.tools, set, d)
			if len(m.tools) == 0 {
				t.Fatal("no tools given to the model")
			}
			checkToolMessages(t, m.inputs)
			// The ToolsNode runs a turn's calls in parallel: their order is not kept.
			got := toolsettest.CallsReceived(servers.Modern)
			slices.Sort(got)
			if want := []string{`echo {"text":"hi"}`, `fail {"message":"boom"}`}; !slices.Equal(got, want) {
				t.Errorf("modern server ran %q, want %q", got, want)
			}
		})
	}
}

// checkDeclared checks what the model was given against the dialect's
// rules, from the JSON Schema Eino hands to a model's client.
func checkDeclared(t *testing.T, tools []*schema.ToolInfo, set *toolset.Set, d toolset.Dialect) {
	t.Helper()
	decls, err := set.Declarations(d)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != len(decls) || len(tools) != len(set.Tools()) {
		t.Fatalf("%d tools given to the model, want %d", len(tools), len(set.Tools()))
	}
	strict := map[string]bool{}
	for _, decl := range decls {
		strict[decl.Name] = decl.Strict
	}
	for _, ti := range tools {
		js, err := ti.ToJSONSchema()
		if err != nil {
			t.Fatalf("%s: %v", ti.Name, err)
		}
		params, err := json.Marshal(js)
		if err != nil {
			t.Fatal(err)
		}
		if err := toolsettest.Check(d, ti.Name, params, strict[ti.Name]); err != nil {
			t.Errorf("%s: %v\n%s", ti.Name, err, params)
		}
	}
}

// checkToolMessages checks the tool messages of the model's second turn.
func checkToolMessages(t *testing.T, inputs [][]*schema.Message) {
	t.Helper()
	if len(inputs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(inputs))
	}
	seen := 0
	for _, msg := range inputs[1] {
		if msg.Role != schema.Tool {
			continue
		}
		seen++
		if !strings.Contains(msg.Content, wantResults[msg.ToolCallID]) {
			t.Errorf("%s: tool message %q, want %q in it", msg.ToolCallID, msg.Content, wantResults[msg.ToolCallID])
		}
	}
	if seen != len(modelCalls) {
		t.Errorf("%d tool messages, want %d", seen, len(modelCalls))
	}
}

// TestToolContextEnds checks that a tool call whose context is done ends
// the agent's run with the context's error rather than a result.
func TestToolContextEnds(t *testing.T) {
	servers := toolsettest.StartServers(t)
	set, err := toolset.Load(testContext(t), toolset.FromHost(servers.Host), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := einoconduit.Tools(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, bt := range tools {
		info, _ := bt.Info(ctx)
		if info.Name != "modern__echo" {
			continue
		}
		out, err := bt.(tool.InvokableTool).InvokableRun(ctx, `{"text":"hi"}`)
		if !errors.Is(err, context.Canceled) || out != "" {
			t.Fatalf("InvokableRun with a done context = %q, %v; want context.Canceled", out, err)
		}
		return
	}
	t.Fatal("no modern__echo tool")
}

// withCamera adds to a host's tools one that answers a screenshot: text,
// an image and a resource link, as an MCP server would.
type withCamera struct{ toolset.Source }

func (w withCamera) ListTools(ctx context.Context) ([]toolset.Tool, error) {
	tools, err := w.Source.ListTools(ctx)
	return append(tools, toolset.Tool{Name: "camera__shot", Server: "camera", Tool: protocol.Tool{
		Name: "shot", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}}), err
}

func (w withCamera) CallTool(ctx context.Context, t toolset.Tool, args json.RawMessage) (*protocol.CallToolResult, error) {
	if t.Server != "camera" {
		return w.Source.CallTool(ctx, t, args)
	}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	return &protocol.CallToolResult{Content: []protocol.Content{
		protocol.TextContent("a screenshot"), protocol.ImageContent(png, "image/png"),
		protocol.ResourceLinkContent(protocol.Resource{URI: "file:///shot.png", Name: "shot.png"}),
	}}, nil
}

// TestEnhancedToolsMultimodal runs the agent with the multimodal tools: a
// tool's image reaches the model as an image part of the tool message,
// its other content as text, and a tool error says so first.
func TestEnhancedToolsMultimodal(t *testing.T) {
	servers := toolsettest.StartServers(t)
	ctx := testContext(t)
	set, err := toolset.Load(ctx, withCamera{toolset.FromHost(servers.Host)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := einoconduit.EnhancedTools(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, bt := range tools {
		if _, ok := bt.(tool.EnhancedInvokableTool); !ok {
			t.Fatalf("%T is not an EnhancedInvokableTool", bt)
		}
	}
	m := &scriptedModel{calls: [][3]string{
		{"call_1", "camera__shot", `{}`},
		{"call_2", "modern__fail", `{"message":"boom"}`},
	}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m, ToolsConfig: compose.ToolsNodeConfig{Tools: tools}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Show me.")}); err != nil {
		t.Fatal(err)
	}
	if len(m.inputs) != 2 {
		t.Fatalf("the model was asked %d times, want 2", len(m.inputs))
	}
	parts := map[string][]schema.MessageInputPart{}
	for _, msg := range m.inputs[1] {
		if msg.Role == schema.Tool {
			parts[msg.ToolCallID] = msg.UserInputMultiContent
		}
	}
	mixed := parts["call_1"]
	if len(mixed) != 3 || mixed[0].Type != schema.ChatMessagePartTypeText || mixed[0].Text != "a screenshot" ||
		mixed[1].Type != schema.ChatMessagePartTypeImageURL || mixed[1].Image == nil || mixed[1].Image.MIMEType != "image/png" ||
		mixed[1].Image.Base64Data == nil || *mixed[1].Image.Base64Data == "" ||
		mixed[2].Type != schema.ChatMessagePartTypeText || !strings.Contains(mixed[2].Text, "file:///shot.png") {
		t.Errorf("multiple content types reached the model as %+v", mixed)
	}
	failed := parts["call_2"]
	if len(failed) < 2 || failed[0].Text != "The tool reported an error:\n" || !strings.Contains(failed[1].Text, "boom") {
		t.Errorf("a tool error reached the model as %+v", failed)
	}
}
