package genaiconduit_test

import (
	"encoding/json"
	"testing"

	genaiconduit "github.com/conduitmcp/conduit/adapters/genai"
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
				return 200, candidate(map[string]any{"text": "Paris"})
			})
			srv := conduittest.NewServer(t, conduittest.WithEra(era))
			ctx := testContext(t)
			sampler := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
			c, err := client.Dial(ctx, srv.URL(), client.WithHandler(sampler))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := c.CallTool(ctx, "sample", map[string]any{"prompt": "Capital of France?"})
			if err != nil || res.Text() != "gemini-sampled said: Paris" {
				t.Fatalf("%v %+v", err, res)
			}
			var req struct {
				Contents []struct {
					Role  string `json:"role"`
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"contents"`
				GenerationConfig struct {
					MaxOutputTokens int `json:"maxOutputTokens"`
				} `json:"generationConfig"`
			}
			reqs := ep.Requests()
			if len(reqs) != 1 || json.Unmarshal(reqs[0], &req) != nil {
				t.Fatalf("%d requests", len(reqs))
			}
			if req.GenerationConfig.MaxOutputTokens != 100 || len(req.Contents) != 1 || req.Contents[0].Role != "user" ||
				len(req.Contents[0].Parts) != 1 || req.Contents[0].Parts[0].Text != "Capital of France?" {
				t.Errorf("request %s", reqs[0])
			}
		})
	}
}

// TestSamplerTools: sampling tools are declared in the Schema type and the
// model's function call comes back as a tool_use block under the
// server's name.
func TestSamplerTools(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, candidate(map[string]any{"functionCall": map[string]any{"id": "f1", "name": "get_weather", "args": map[string]any{"city": "Paris"}}})
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
		MaxTokens: 50,
		Tools:     []protocol.Tool{{Name: "get.weather", InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","format":"uri"}}}`)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := res.Blocks()
	if res.StopReason != protocol.StopReasonToolUse || len(blocks) != 1 || blocks[0].Name != "get.weather" || string(blocks[0].Input) != `{"city":"Paris"}` {
		t.Fatalf("%+v %s", res, res.Content)
	}
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(ep.Requests()[0], &req)
	fd := req.Tools[0].FunctionDeclarations[0]
	if err := toolsettest.Check(toolset.Gemini, fd.Name, fd.Parameters, false); err != nil {
		t.Error(err)
	}
}

// TestSamplerToolNamesCollide: two sampling tools whose names differ only
// in a character every provider's names do not take are declared under
// two names, and the model's call of each comes back under its own server
// name (both were declared "get_weather", and a call went to the last of
// them).
func TestSamplerToolNamesCollide(t *testing.T) {
	var declared []string
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		var req struct {
			Tools []struct {
				FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &req)
		declared = nil
		var calls []any
		for _, tool := range req.Tools {
			for _, fd := range tool.FunctionDeclarations {
				declared = append(declared, fd.Name)
				calls = append(calls, map[string]any{"functionCall": map[string]any{"id": "f_" + fd.Name, "name": fd.Name, "args": map[string]any{}}})
			}
		}
		return 200, candidate(calls...)
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)}},
		MaxTokens: 50,
		Tools:     toolsettest.CollidingTools(),
	})
	toolsettest.CheckSamplingNames(t, declared, res, err)
}

// TestSamplerNegativeMaxTokens: a server's maxTokens below zero is not
// passed (as a zero is not); -4294967196 wrapped around to a limit of 100
// tokens when cut to the API's 32 bits.
func TestSamplerNegativeMaxTokens(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, candidate(map[string]any{"text": "Paris"})
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
	_, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"Capital of France?"}`)}},
		MaxTokens: -(1 << 32) + 100,
	})
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		GenerationConfig struct {
			MaxOutputTokens *int64 `json:"maxOutputTokens"`
		} `json:"generationConfig"`
	}
	if err := json.Unmarshal(ep.Requests()[0], &req); err != nil {
		t.Fatal(err)
	}
	if got := req.GenerationConfig.MaxOutputTokens; got != nil {
		t.Errorf("maxOutputTokens = %d, want none", *got)
	}
}

// TestSamplerCallWithoutArgs: a function call without args (Gemini's for
// a tool without parameters) comes back as a tool_use block whose input
// is an empty object, as the protocol requires; it was null.
func TestSamplerCallWithoutArgs(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, candidate(map[string]any{"functionCall": map[string]any{"id": "f1", "name": "now"}})
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
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

// TestSamplerToolResultNamed: a tool_result block of the history becomes
// a functionResponse named as the call it answers, which the API
// requires; its name was empty.
func TestSamplerToolResultNamed(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, candidate(map[string]any{"text": "Sunny."})
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
	_, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages: []protocol.SamplingMessage{
			{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"weather?"}`)},
			{Role: protocol.RoleAssistant, Content: json.RawMessage(`{"type":"tool_use","id":"u1","name":"get.weather","input":{}}`)},
			{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"tool_result","toolUseId":"u1","content":[{"type":"text","text":"sunny"}]}`)},
		},
		MaxTokens: 50,
		Tools:     []protocol.Tool{{Name: "get.weather"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Contents []struct {
			Parts []struct {
				FunctionResponse *struct {
					ID   string `json:"id"`
					Name string `json:"name"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(ep.Requests()[0], &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Contents) != 3 || len(req.Contents[2].Parts) != 1 || req.Contents[2].Parts[0].FunctionResponse == nil ||
		req.Contents[2].Parts[0].FunctionResponse.Name != "get_weather" {
		t.Errorf("request %s, want the third content a functionResponse named get_weather", ep.Requests()[0])
	}
}

// TestSamplerNullPart: a null among the parts of the model's answer is
// skipped; the sampler dereferenced it and panicked, which ended the
// whole program (the handler runs on a goroutine of the client).
func TestSamplerNullPart(t *testing.T) {
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		return 200, candidate(nil, map[string]any{"text": "Paris"}, nil)
	})
	s := &genaiconduit.Sampler{Client: newClient(t, ep.URL), Model: "gemini-test"}
	res, err := s.CreateMessage(testContext(t), &protocol.CreateMessageParams{
		Messages:  []protocol.SamplingMessage{{Role: protocol.RoleUser, Content: json.RawMessage(`{"type":"text","text":"Capital of France?"}`)}},
		MaxTokens: 50,
	})
	if err != nil {
		t.Fatal(err)
	}
	blocks, _ := res.Blocks()
	if len(blocks) != 1 || blocks[0].Text != "Paris" {
		t.Fatalf("blocks %s, want the text Paris", res.Content)
	}
}
