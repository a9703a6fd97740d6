package einoconduit_test

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/schema"

	einoconduit "github.com/conduitmcp/conduit/adapters/eino"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// answeringModel is an Eino chat model that answers with reply and
// records what it was asked.
type answeringModel struct {
	reply *schema.Message
	input []*schema.Message
	opts  *model.Options
}

func (m *answeringModel) Generate(_ context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	m.input = input
	m.opts = model.GetCommonOptions(nil, opts...)
	return m.reply, nil
}

func (m *answeringModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("answering model: no streaming")
}

// TestSamplerBothEras: a server's sampling request (legacy
// sampling/createMessage, modern MRTR input request) is answered by the
// Eino model.
func TestSamplerBothEras(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Legacy, conduittest.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			srv := conduittest.NewServer(t, conduittest.WithEra(era))
			ctx := testContext(t)
			m := &answeringModel{reply: schema.AssistantMessage("Paris", nil)}
			c, err := client.Dial(ctx, srv.URL(), client.WithHandler(&einoconduit.Sampler{Model: m, Name: "scripted"}))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "sample", map[string]any{"prompt": "Capital of France?"})
			if err != nil || res.Text() != "scripted said: Paris" {
				t.Fatalf("%v %+v", err, res)
			}
			if len(m.input) != 1 || m.input[0].Role != schema.User || m.input[0].Content != "Capital of France?" {
				t.Errorf("the model read %+v", m.input)
			}
			if m.opts.MaxTokens == nil || *m.opts.MaxTokens != 100 {
				t.Errorf("max tokens %v, want 100", m.opts.MaxTokens)
			}
		})
	}
}

// TestSamplerTools: the sampling tools are given to the model, and its
// tool calls come back as tool_use blocks under the server's names;
// earlier tool uses and results reach it as tool calls and tool messages.
func TestSamplerTools(t *testing.T) {
	m := &answeringModel{reply: &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{
		{ID: "t1", Type: "function", Function: schema.FunctionCall{Name: "weather_get", Arguments: `{"city":"Paris"}`}},
	}, ResponseMeta: &schema.ResponseMeta{FinishReason: "tool_calls"}}}
	s := &einoconduit.Sampler{Model: m}
	p := &protocol.CreateMessageParams{MaxTokens: 50, Messages: []protocol.SamplingMessage{
		{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"Weather in Rome, then Paris?"}`)},
		{Role: protocol.RoleAssistant, Content: json.RawMessage(`[{"type":"tool_use","id":"t0","name":"weather.get","input":{"city":"Rome"}}]`)},
		{Role: protocol.RoleUser, Content: json.RawMessage(`[{"type":"tool_result","toolUseId":"t0","content":[{"type":"text","text":"sunny"}]}]`)},
	}, Tools: []protocol.Tool{{Name: "weather.get", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)}},
		ToolChoice: &protocol.ToolChoice{Mode: "required"}}
	res, err := s.CreateMessage(testContext(t), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.opts.Tools) != 1 || m.opts.Tools[0].Name != "weather_get" || m.opts.ToolChoice == nil || *m.opts.ToolChoice != schema.ToolChoiceForced {
		t.Errorf("tools given %+v, choice %v", m.opts.Tools, m.opts.ToolChoice)
	}
	if len(m.input) != 3 || len(m.input[1].ToolCalls) != 1 || m.input[1].ToolCalls[0].Function.Name != "weather_get" ||
		m.input[2].Role != schema.Tool || m.input[2].ToolCallID != "t0" || m.input[2].Content != "sunny" {
		t.Errorf("the model read %+v", m.input)
	}
	var block protocol.Content
	if err := json.Unmarshal(res.Content, &block); err != nil {
		t.Fatal(err)
	}
	if res.StopReason != protocol.StopReasonToolUse || block.Type != protocol.ContentToolUse || block.Name != "weather.get" || string(block.Input) != `{"city":"Paris"}` {
		t.Errorf("result %+v, block %+v", res, block)
	}
}

// TestSamplerToolNamesCollide: two sampling tools whose names differ only
// in a character providers refuse are given to the model under two
// names, the history's use of one names it, and the model's call of
// each comes back under its own server name (both were given as
// "get_weather", and a call went to the last of them).
func TestSamplerToolNamesCollide(t *testing.T) {
	m := &answeringModel{}
	s := &einoconduit.Sampler{Model: m}
	p := &protocol.CreateMessageParams{MaxTokens: 50, Messages: []protocol.SamplingMessage{
		{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)},
		{Role: protocol.RoleAssistant, Content: json.RawMessage(`[{"type":"tool_use","id":"t0","name":"get_weather","input":{}}]`)},
		{Role: protocol.RoleUser, Content: json.RawMessage(`[{"type":"tool_result","toolUseId":"t0","content":[]}]`)},
	}, Tools: toolsettest.CollidingTools()}
	// The model calls what it was given: a first request learns the names.
	m.reply = schema.AssistantMessage("", nil)
	if _, err := s.CreateMessage(testContext(t), p); err != nil {
		t.Fatal(err)
	}
	if len(m.opts.Tools) != 2 || m.opts.Tools[0].Name == m.opts.Tools[1].Name {
		t.Fatalf("tools given %+v, want two names", m.opts.Tools)
	}
	declared := []string{m.opts.Tools[0].Name, m.opts.Tools[1].Name}
	if calls := m.input[1].ToolCalls; len(calls) != 1 || calls[0].Function.Name != declared[1] {
		t.Errorf("the history's use of get_weather: %+v, want %q", calls, declared[1])
	}
	m.reply = &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{
		{ID: "t1", Type: "function", Function: schema.FunctionCall{Name: declared[0], Arguments: `{}`}},
		{ID: "t2", Type: "function", Function: schema.FunctionCall{Name: declared[1], Arguments: `{}`}},
	}}
	res, err := s.CreateMessage(testContext(t), p)
	toolsettest.CheckSamplingNames(t, declared, res, err)
}

// TestSamplerToolArgumentsNotObject: a model's tool call whose arguments
// are not a JSON object fails the sampling request with
// toolset.ErrInvalidArguments (it went to the server as {}); blank
// arguments are a call without any: {}.
func TestSamplerToolArgumentsNotObject(t *testing.T) {
	for args, ok := range map[string]bool{`{"city":"Par`: false, `[1]`: false, `7`: false, ``: true} {
		m := &answeringModel{reply: &schema.Message{Role: schema.Assistant, ToolCalls: []schema.ToolCall{
			{ID: "t1", Type: "function", Function: schema.FunctionCall{Name: "weather_get", Arguments: args}},
		}}}
		s := &einoconduit.Sampler{Model: m}
		res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{MaxTokens: 50,
			Messages: []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
			Tools:    []protocol.Tool{{Name: "weather.get"}}})
		if !ok {
			if !errors.Is(err, toolset.ErrInvalidArguments) {
				t.Errorf("arguments %q: CreateMessage = %v, want an error matching toolset.ErrInvalidArguments", args, err)
			}
			continue
		}
		var block protocol.Content
		if err != nil || json.Unmarshal(res.Content, &block) != nil || string(block.Input) != `{}` {
			t.Errorf("arguments %q: %v, result %+v; want one tool_use with input {}", args, err, res)
		}
	}
}

// TestSamplerManyTextBlocks: an assistant message of many text blocks (a
// server may send hundreds of thousands within a message's size limit)
// is joined in linear time. Each block copied the text joined so far:
// 32,768 blocks of 8 bytes allocated 4 GB, and a 16 MiB request of
// one-byte blocks minutes of CPU.
func TestSamplerManyTextBlocks(t *testing.T) {
	blocks := make([]protocol.Content, 1<<15)
	for i := range blocks {
		blocks[i] = protocol.TextContent("abcdefg ")
	}
	many, _ := json.Marshal(blocks)
	m := &answeringModel{reply: schema.AssistantMessage("ok", nil)}
	s := &einoconduit.Sampler{Model: m}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages: []protocol.SamplingMessage{
			{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"Count."}`)},
			{Role: protocol.RoleAssistant, Content: many},
		},
		MaxTokens: 50,
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<30 {
		t.Errorf("%d MB allocated for a request of %d KB, want less than 1 GB", n>>20, len(many)>>10)
	}
	if len(m.input) != 2 || m.input[1].Role != schema.Assistant || len(m.input[1].Content) != 8*len(blocks) {
		t.Errorf("the assistant's message is not the %d bytes of its blocks", 8*len(blocks))
	}
}
