package openaiconduit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"testing"

	openaiconduit "github.com/conduitmcp/conduit/adapters/openai"
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
				return 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-sampled",
					"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "Paris"}}}}
			})
			srv := conduittest.NewServer(t, conduittest.WithEra(era))
			ctx := testContext(t)
			sampler := &openaiconduit.Sampler{Client: newClient(ep.URL), Model: "gpt-test"}
			c, err := client.Dial(ctx, srv.URL(), client.WithHandler(sampler))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "sample", map[string]any{"prompt": "Capital of France?"})
			if err != nil || res.Text() != "gpt-sampled said: Paris" {
				t.Fatalf("%v %+v", err, res)
			}
			reqs := ep.Requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			var req struct {
				Model    string `json:"model"`
				MaxToks  int    `json:"max_completion_tokens"`
				Messages []struct {
					Role    string `json:"role"`
					Content []struct {
						Type string `json:"type"`
						Text string `json:"text"`
					} `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(reqs[0], &req); err != nil {
				t.Fatal(err)
			}
			if req.Model != "gpt-test" || req.MaxToks != 100 || len(req.Messages) != 1 || req.Messages[0].Role != "user" ||
				len(req.Messages[0].Content) != 1 || req.Messages[0].Content[0].Text != "Capital of France?" {
				t.Errorf("request %s", reqs[0])
			}
		})
	}
}

// TestSamplerTools: the sampling tools of 2025-11-25 are declared as
// functions and the model's calls come back as tool_use blocks, with the
// server's names.
func TestSamplerTools(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
				"tool_calls": []any{map[string]any{"id": "t1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": `{"city":"Paris"}`}}}}}}}
	})
	s := &openaiconduit.Sampler{Client: newClient(ep.URL), Model: "gpt-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
		MaxTokens: 50,
		Tools:     []protocol.Tool{{Name: "get.weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := res.Blocks()
	if res.StopReason != protocol.StopReasonToolUse || len(blocks) != 1 || blocks[0].Type != protocol.ContentToolUse ||
		blocks[0].Name != "get.weather" || string(blocks[0].Input) != `{"city":"Paris"}` {
		t.Fatalf("%+v %s", res, res.Content)
	}
	var req struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(ep.Requests()[0], &req)
	if len(req.Tools) != 1 || req.Tools[0].Function.Name != "get_weather" {
		t.Fatalf("%s", ep.Requests()[0])
	}
}

// TestSamplerToolNamesCollide: two sampling tools whose names differ only
// in a character providers refuse ("get.weather", "get_weather") are
// declared under two names, and the model's call of each comes back
// under its own server name (both were declared "get_weather", which the
// API refuses, and a call went to the last of them).
func TestSamplerToolNamesCollide(t *testing.T) {
	var declared []string
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		var req struct {
			Tools []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &req)
		declared = nil
		var calls []any
		for i, tool := range req.Tools {
			declared = append(declared, tool.Function.Name)
			calls = append(calls, map[string]any{"id": fmt.Sprint("t", i), "type": "function", "function": map[string]any{"name": tool.Function.Name, "arguments": `{}`}})
		}
		return 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}}}}
	})
	s := &openaiconduit.Sampler{Client: newClient(ep.URL), Model: "gpt-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages: []protocol.SamplingMessage{
			{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)},
			{Role: protocol.RoleAssistant, Content: json.RawMessage(`{"type":"tool_use","id":"u1","name":"get_weather","input":{}}`)},
			{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"tool_result","toolUseId":"u1","content":[]}`)},
		},
		MaxTokens: 50,
		Tools:     toolsettest.CollidingTools(),
	})
	toolsettest.CheckSamplingNames(t, declared, res, err)
	// The history's call of get_weather names the tool declared for it.
	var req struct {
		Messages []struct {
			ToolCalls []struct {
				Function struct {
					Name string `json:"name"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(ep.Requests()[0], &req)
	if calls := req.Messages[1].ToolCalls; len(calls) != 1 || calls[0].Function.Name != declared[1] {
		t.Errorf("the history's call of get_weather: %s, want %q", ep.Requests()[0], declared[1])
	}
}

// TestSamplerToolArgumentsNotObject: a model's tool call whose arguments
// are not a JSON object fails the sampling request with
// toolset.ErrInvalidArguments (it went to the server as {}, which would
// run its tool with arguments the model did not give); blank arguments
// are a call without any: {}.
func TestSamplerToolArgumentsNotObject(t *testing.T) {
	for args, ok := range map[string]bool{`{"city":"Par`: false, `[1]`: false, `"x"`: false, ``: true, ` `: true} {
		ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
			return 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-test",
				"choices": []any{map[string]any{"index": 0, "finish_reason": "tool_calls", "message": map[string]any{"role": "assistant", "content": nil,
					"tool_calls": []any{map[string]any{"id": "t1", "type": "function", "function": map[string]any{"name": "get_weather", "arguments": args}}}}}}}
		})
		s := &openaiconduit.Sampler{Client: newClient(ep.URL), Model: "gpt-test"}
		res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
			Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
			MaxTokens: 50,
			Tools:     []protocol.Tool{{Name: "get_weather"}},
		})
		if !ok {
			if !errors.Is(err, toolset.ErrInvalidArguments) {
				t.Errorf("arguments %q: CreateMessage = %v, want an error matching toolset.ErrInvalidArguments", args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("arguments %q: %v", args, err)
			continue
		}
		if blocks, _ := res.Blocks(); len(blocks) != 1 || string(blocks[0].Input) != `{}` {
			t.Errorf("arguments %q: blocks %+v, want one tool_use with input {}", args, blocks)
		}
	}
}

// TestSamplerManyTextBlocks: an assistant message of many text blocks (a
// server may send hundreds of thousands within a message's size limit)
// is joined in linear time. Each block copied the text joined so far:
// 32,768 blocks of 8 bytes allocated 4 GB, and a 16 MiB request of
// one-byte blocks minutes of CPU.
func TestSamplerManyTextBlocks(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, map[string]any{"id": "c", "object": "chat.completion", "created": 1, "model": "gpt-sampled",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "ok"}}}}
	})
	blocks := make([]protocol.Content, 1<<15)
	for i := range blocks {
		blocks[i] = protocol.TextContent("abcdefg ")
	}
	many, _ := json.Marshal(blocks)
	s := &openaiconduit.Sampler{Client: newClient(ep.URL), Model: "gpt-test"}
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
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(ep.Requests()[0], &req); err != nil {
		t.Fatal(err)
	}
	var text string
	if len(req.Messages) != 2 || req.Messages[1].Role != "assistant" || json.Unmarshal(req.Messages[1].Content, &text) != nil || len(text) != 8*len(blocks) {
		t.Errorf("the assistant's message is not the %d bytes of its blocks", 8*len(blocks))
	}
}
