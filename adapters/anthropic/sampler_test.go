package anthropicconduit_test

import (
	"encoding/json"
	"errors"
	"testing"

	anthropicconduit "github.com/conduitmcp/conduit/adapters/anthropic"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// TestSamplerBothEras: a server's sampling request (legacy
// sampling/createMessage, modern MRTR input request) is answered by the
// model through the SDK.
func TestSamplerBothEras(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Legacy, conduittest.Modern} {
		t.Run(era.String(), func(t *testing.T) {
			ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
				m := message([]any{map[string]any{"type": "text", "text": "Paris"}}, "end_turn")
				m["model"] = "claude-sampled"
				return 200, m
			})
			srv := conduittest.NewServer(t, conduittest.WithEra(era))
			ctx := testContext(t)
			sampler := &anthropicconduit.Sampler{Client: newClient(ep.URL), Model: "claude-test"}
			c, err := client.Dial(ctx, srv.URL(), client.WithHandler(sampler))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "sample", map[string]any{"prompt": "Capital of France?"})
			if err != nil || res.Text() != "claude-sampled said: Paris" {
				t.Fatalf("%v %+v", err, res)
			}
			var req struct {
				Model     string `json:"model"`
				MaxTokens int    `json:"max_tokens"`
				Messages  []struct {
					Role    string `json:"role"`
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			reqs := ep.Requests()
			if len(reqs) != 1 || json.Unmarshal(reqs[0], &req) != nil {
				t.Fatalf("%d requests", len(reqs))
			}
			if req.Model != "claude-test" || req.MaxTokens != 100 || len(req.Messages) != 1 || req.Messages[0].Role != "user" ||
				len(req.Messages[0].Content) != 1 || req.Messages[0].Content[0].Text != "Capital of France?" {
				t.Errorf("request %s", reqs[0])
			}
		})
	}
}

// TestSamplerTools: sampling tools are declared with names the API takes
// and the model's tool_use comes back under the server's name.
func TestSamplerTools(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, message([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": map[string]any{"city": "Paris"}}}, "tool_use")
	})
	s := &anthropicconduit.Sampler{Client: newClient(ep.URL), Model: "claude-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:   []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
		MaxTokens:  50,
		Tools:      []protocol.Tool{{Name: "get.weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
		ToolChoice: &protocol.ToolChoice{Mode: "required"},
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := res.Blocks()
	if res.StopReason != protocol.StopReasonToolUse || len(blocks) != 1 || blocks[0].Name != "get.weather" || string(blocks[0].Input) != `{"city":"Paris"}` {
		t.Fatalf("%+v %s", res, res.Content)
	}
	var req struct {
		Tools      []struct{ Name string } `json:"tools"`
		ToolChoice struct{ Type string }   `json:"tool_choice"`
	}
	_ = json.Unmarshal(ep.Requests()[0], &req)
	if len(req.Tools) != 1 || req.Tools[0].Name != "get_weather" || req.ToolChoice.Type != "any" {
		t.Fatalf("%s", ep.Requests()[0])
	}
}

// TestSamplerToolNamesCollide: two sampling tools whose names differ only
// in a character the API refuses are declared under two names, and the
// model's use of each comes back under its own server name (both were
// declared "get_weather", and a use went to the last of them).
func TestSamplerToolNamesCollide(t *testing.T) {
	var declared []string
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		var req struct{ Tools []struct{ Name string } }
		_ = json.Unmarshal(body, &req)
		declared = nil
		var uses []any
		for _, tool := range req.Tools {
			declared = append(declared, tool.Name)
			uses = append(uses, map[string]any{"type": "tool_use", "id": "toolu_" + tool.Name, "name": tool.Name, "input": map[string]any{}})
		}
		return 200, message(uses, "tool_use")
	})
	s := &anthropicconduit.Sampler{Client: newClient(ep.URL), Model: "claude-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
		MaxTokens: 50,
		Tools:     toolsettest.CollidingTools(),
	})
	toolsettest.CheckSamplingNames(t, declared, res, err)
}

// TestSamplerToolUseInputNotObject: a tool_use whose input is not a JSON
// object (a proxy's string of the object, an array, a number) fails the
// sampling request with toolset.ErrInvalidArguments, as the other
// samplers do; it went back to the server as the tool_use's input, for
// its tool to run with arguments the model did not give.
func TestSamplerToolUseInputNotObject(t *testing.T) {
	for _, input := range []string{`"{\"city\":\"Paris\"}"`, `["Paris"]`, `42`} {
		t.Run(input, func(t *testing.T) {
			ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
				return 200, message([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": json.RawMessage(input)}}, "tool_use")
			})
			s := &anthropicconduit.Sampler{Client: newClient(ep.URL), Model: "claude-test"}
			res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
				Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
				MaxTokens: 50,
				Tools:     []protocol.Tool{{Name: "get_weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
			})
			if !errors.Is(err, toolset.ErrInvalidArguments) {
				var content json.RawMessage
				if res != nil {
					content = res.Content
				}
				t.Fatalf("err = %v, content %s; want toolset.ErrInvalidArguments", err, content)
			}
		})
	}
}

// TestSamplerToolUseWithoutInput: a tool_use without input is a call
// without arguments: its input is {}.
func TestSamplerToolUseWithoutInput(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, message([]any{map[string]any{"type": "tool_use", "id": "toolu_1", "name": "now"}}, "tool_use")
	})
	s := &anthropicconduit.Sampler{Client: newClient(ep.URL), Model: "claude-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"time?"}`)}},
		MaxTokens: 50,
		Tools:     []protocol.Tool{{Name: "now"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := res.Blocks()
	if len(blocks) != 1 || blocks[0].Type != protocol.ContentToolUse || string(blocks[0].Input) != "{}" {
		t.Fatalf("blocks %s, want one tool_use with input {}", res.Content)
	}
}
