package anthropicconduit_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"

	anthropicconduit "github.com/conduitmcp/conduit/adapters/anthropic"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// modelCalls are the tool_use blocks of the scripted model's first turn:
// tools of both servers, a tool error, input that is not an object and a
// name that does not exist; want is what the model must read back.
var modelCalls = []struct {
	id, name, input, want string
	isError               bool
}{
	{"toolu_1", "modern__echo", `{"text":"hi"}`, "hi", false},
	{"toolu_2", "legacy__add", `{"a":19,"b":23}`, "42", false},
	{"toolu_3", "modern__fail", `{"message":"boom"}`, "boom", true},
	{"toolu_4", "legacy__echo", `"{\"text\":\"cut sh"`, "not a JSON object", true},
	{"toolu_5", "no_such_tool", `{}`, "There is no tool", true},
}

func messagesScript(t *testing.T) toolsettest.Script {
	return func(n int, path string, body []byte) (int, any) {
		if path != "/v1/messages" {
			t.Errorf("path %s", path)
		}
		if n > 0 {
			return 200, message([]any{map[string]any{"type": "text", "text": "The answer is 42."}}, "end_turn")
		}
		var content []any
		for _, c := range modelCalls {
			content = append(content, map[string]any{"type": "tool_use", "id": c.id, "name": c.name, "input": json.RawMessage(c.input)})
		}
		return 200, message(content, "tool_use")
	}
}

// TestMessageTurnOnTheWire drives the real SDK client against a scripted
// messages endpoint and real MCP servers of both eras.
func TestMessageTurnOnTheWire(t *testing.T) {
	servers := toolsettest.StartServers(t)
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-strict", true: "strict"}[strict], func(t *testing.T) {
			servers.Modern.Reset()
			ctx := testContext(t)
			set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := toolsettest.NewEndpoint(t, messagesScript(t))
			params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
				Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is 19+23?"))}}
			for turns, done := 0, false; !done; turns++ {
				if turns > 3 {
					t.Fatal("the loop did not end")
				}
				var msg *anthropic.Message
				msg, done, err = anthropicconduit.MessageTurn(ctx, newClient(ep.URL), set, &params, &anthropicconduit.Options{Strict: strict})
				if err != nil {
					t.Fatal(err)
				}
				if done && msg.Content[0].Text != "The answer is 42." {
					t.Fatalf("answer %+v", msg.Content)
				}
			}
			reqs := ep.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			checkTools(t, reqs[0], len(set.Tools()), strict)
			checkResults(t, reqs[1])
			if got, want := toolsettest.CallsReceived(servers.Modern), []string{`echo {"text":"hi"}`, `fail {"message":"boom"}`}; !slices.Equal(got, want) {
				t.Errorf("modern server ran %q, want %q", got, want)
			}
		})
	}
}

func checkTools(t *testing.T, body []byte, n int, strict bool) {
	t.Helper()
	var req struct {
		Tools []struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"input_schema"`
			Strict      bool            `json:"strict"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Tools) != n {
		t.Fatalf("%v: %d tools, want %d", err, len(req.Tools), n)
	}
	stricts := 0
	for _, tool := range req.Tools {
		if tool.Strict {
			stricts++
		}
		d := toolset.Anthropic
		if tool.Strict {
			d = toolset.AnthropicStrict
		}
		if err := toolsettest.Check(d, tool.Name, tool.InputSchema, tool.Strict); err != nil {
			t.Error(err)
		}
	}
	if strict != (stricts > 0) {
		t.Errorf("strict %v, %d strict tools", strict, stricts)
	}
}

// checkResults checks the user message of tool_result blocks.
func checkResults(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
				IsError   bool   `json:"is_error"`
				Content   []struct {
					Type string `json:"type"`
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Messages) != 3 {
		t.Fatalf("%v: %s", err, body)
	}
	last := req.Messages[2]
	if last.Role != "user" || len(last.Content) != len(modelCalls) {
		t.Fatalf("last message %+v", last)
	}
	for i, c := range modelCalls {
		b := last.Content[i]
		if b.Type != "tool_result" || b.ToolUseID != c.id || b.IsError != c.isError || len(b.Content) == 0 || !strings.Contains(b.Content[0].Text, c.want) {
			t.Errorf("%s: %+v, want %q", c.id, b, c.want)
		}
	}
}

// TestMessageTurnCancelledAnswersEveryUse: when ctx ends while a tool
// runs, every tool_use of the model's message still gets its tool_result
// in the user message after it (the use that was cut and those not run
// say so), so that the conversation goes on in the next turn: that
// message was left out, and the API refuses every later request of a
// conversation with a tool_use not answered.
func TestMessageTurnCancelledAnswersEveryUse(t *testing.T) {
	ctx := testContext(t)
	srv, set := toolsettest.LoadServer(ctx, t, conduittest.Modern)
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		if n > 0 {
			return 200, message([]any{map[string]any{"type": "text", "text": "Stopped."}}, "end_turn")
		}
		return 200, message([]any{
			map[string]any{"type": "tool_use", "id": "toolu_1", "name": "slow", "input": map[string]any{"steps": 1, "delayMs": 60000}},
			map[string]any{"type": "tool_use", "id": "toolu_2", "name": "echo", "input": map[string]any{"text": "hi"}},
			map[string]any{"type": "tool_use", "id": "toolu_3", "name": "echo", "input": map[string]any{"text": "late"}},
		}, "tool_use")
	})
	params := anthropic.MessageNewParams{Model: "claude-test", MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Go."))}}
	turnCtx, cancel := context.WithCancel(ctx)
	go func() {
		// The slow call, the first, is running: the user stops the turn.
		_, _ = srv.WaitReceived(ctx, "tools/call")
		cancel()
	}()
	if _, _, err := anthropicconduit.MessageTurn(turnCtx, newClient(ep.URL), set, &params, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("MessageTurn = %v, want context.Canceled", err)
	}
	params.Messages = append(params.Messages, anthropic.NewUserMessage(anthropic.NewTextBlock("Go on.")))
	if _, _, err := anthropicconduit.MessageTurn(ctx, newClient(ep.URL), set, &params, nil); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content []struct {
				Type      string `json:"type"`
				ToolUseID string `json:"tool_use_id"`
			} `json:"content"`
		} `json:"messages"`
	}
	if reqs := ep.Requests(); len(reqs) != 2 || json.Unmarshal(reqs[1], &req) != nil || len(req.Messages) < 3 {
		t.Fatalf("%d requests", len(ep.Requests()))
	}
	var answered []string
	for _, b := range req.Messages[2].Content {
		if b.Type == "tool_result" {
			answered = append(answered, b.ToolUseID)
		}
	}
	if want := []string{"toolu_1", "toolu_2", "toolu_3"}; req.Messages[1].Role != "assistant" || req.Messages[2].Role != "user" || !slices.Equal(answered, want) {
		t.Errorf("the message after the tool uses answers %q, want %q", answered, want)
	}
	if got := toolsettest.CallsReceived(srv); len(got) != 1 {
		t.Errorf("the server received %q, want the first call only", got)
	}
}
