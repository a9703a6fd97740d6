package openaiconduit_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	openaiconduit "github.com/conduitmcp/conduit/adapters/openai"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func newClient(url string) *openai.Client {
	c := openai.NewClient(option.WithBaseURL(url+"/v1/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &c
}

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
	{"call_5", "no_such_tool", `{}`},
}

// wantResults are what the model must read back for each call.
var wantResults = map[string]string{
	"call_1": "hi", "call_2": "42", "call_3": "The tool reported an error:\n", "call_4": "cut short", "call_5": "There is no tool",
}

func chatScript(t *testing.T) toolsettest.Script {
	return func(n int, path string, body []byte) (int, any) {
		if path != "/v1/chat/completions" {
			t.Errorf("path %s", path)
		}
		msg := map[string]any{"role": "assistant", "content": "The answer is 42."}
		finish := "stop"
		if n == 0 {
			var calls []any
			for _, c := range modelCalls {
				calls = append(calls, map[string]any{"id": c[0], "type": "function", "function": map[string]any{"name": c[1], "arguments": c[2]}})
			}
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": calls}
			finish = "tool_calls"
		}
		return 200, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": finish, "message": msg}}}
	}
}

// TestChatTurnOnTheWire drives the real SDK client against a scripted
// chat completions endpoint and real MCP servers of both eras.
func TestChatTurnOnTheWire(t *testing.T) {
	servers := toolsettest.StartServers(t)
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "non-strict", true: "strict"}[strict], func(t *testing.T) {
			servers.Modern.Reset()
			ctx := testContext(t)
			set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := toolsettest.NewEndpoint(t, chatScript(t))
			client := newClient(ep.URL)
			params := openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("What is 19+23?")}}
			o := &openaiconduit.Options{Strict: strict}
			turns := 0
			for done := false; !done; turns++ {
				if turns > 3 {
					t.Fatal("the loop did not end")
				}
				var resp *openai.ChatCompletion
				resp, done, err = openaiconduit.ChatTurn(ctx, client, set, &params, o)
				if err != nil {
					t.Fatal(err)
				}
				if done && resp.Choices[0].Message.Content != "The answer is 42." {
					t.Fatalf("answer %q", resp.Choices[0].Message.Content)
				}
			}
			reqs := ep.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			checkChatTools(t, reqs[0], len(set.Tools()), strict)
			checkChatResults(t, reqs[1])
			if got, want := toolsettest.CallsReceived(servers.Modern), []string{`echo {"text":"hi"}`, `fail {"message":"boom"}`}; !slices.Equal(got, want) {
				t.Errorf("modern server ran %q, want %q", got, want)
			}
		})
	}
}

// checkChatTools checks the declarations the endpoint received against
// OpenAI's rules.
func checkChatTools(t *testing.T, body []byte, n int, strict bool) {
	t.Helper()
	var req struct {
		Tools []struct {
			Type     string `json:"type"`
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
				Strict     *bool           `json:"strict"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Tools) != n {
		t.Fatalf("%d tools declared, want %d", len(req.Tools), n)
	}
	stricts := 0
	for _, tool := range req.Tools {
		isStrict := tool.Function.Strict != nil && *tool.Function.Strict
		if isStrict {
			stricts++
		}
		if err := toolsettest.Check(toolset.OpenAI, tool.Function.Name, tool.Function.Parameters, isStrict); err != nil || tool.Type != "function" {
			t.Errorf("%s: %v", tool.Type, err)
		}
	}
	if strict != (stricts > 0) {
		t.Errorf("strict %v, %d strict declarations", strict, stricts)
	}
}

// checkChatResults checks the tool messages of the second request.
func checkChatResults(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Messages []struct {
			Role       string          `json:"role"`
			ToolCallID string          `json:"tool_call_id"`
			Content    json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, m := range req.Messages {
		if m.Role != "tool" {
			continue
		}
		seen++
		var text string
		_ = json.Unmarshal(m.Content, &text)
		if !strings.Contains(text, wantResults[m.ToolCallID]) {
			t.Errorf("%s: tool message %q, want %q in it", m.ToolCallID, text, wantResults[m.ToolCallID])
		}
	}
	if seen != len(modelCalls) {
		t.Errorf("%d tool messages, want %d", seen, len(modelCalls))
	}
}

// TestChatTurnCancelledAnswersEveryCall: when ctx ends while a tool runs,
// every call of the model's message still gets its tool message (the
// call that was cut and those not run say so), so that the conversation
// goes on in the next turn: the calls after the cut one had none, and
// the API refuses every later request of a conversation with an
// unanswered tool call.
func TestChatTurnCancelledAnswersEveryCall(t *testing.T) {
	ctx := testContext(t)
	srv, set := toolsettest.LoadServer(ctx, t, conduittest.Modern)
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		msg := map[string]any{"role": "assistant", "content": "Stopped."}
		if n == 0 {
			msg = map[string]any{"role": "assistant", "content": nil, "tool_calls": []any{
				map[string]any{"id": "call_1", "type": "function", "function": map[string]any{"name": "slow", "arguments": `{"steps":1,"delayMs":60000}`}},
				map[string]any{"id": "call_2", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"hi"}`}},
				map[string]any{"id": "call_3", "type": "function", "function": map[string]any{"name": "echo", "arguments": `{"text":"late"}`}},
			}}
		}
		return 200, map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-test",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}}}
	})
	params := openai.ChatCompletionNewParams{Model: "gpt-test", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Go.")}}
	turnCtx, cancel := context.WithCancel(ctx)
	go func() {
		// The slow call, the first, is running: the user stops the turn.
		_, _ = srv.WaitReceived(ctx, "tools/call")
		cancel()
	}()
	if _, _, err := openaiconduit.ChatTurn(turnCtx, newClient(ep.URL), set, &params, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ChatTurn = %v, want context.Canceled", err)
	}
	params.Messages = append(params.Messages, openai.UserMessage("Go on."))
	if _, _, err := openaiconduit.ChatTurn(ctx, newClient(ep.URL), set, &params, nil); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Messages []struct {
			Role       string `json:"role"`
			ToolCallID string `json:"tool_call_id"`
			ToolCalls  []struct {
				ID string `json:"id"`
			} `json:"tool_calls"`
		} `json:"messages"`
	}
	if reqs := ep.Requests(); len(reqs) != 2 || json.Unmarshal(reqs[1], &req) != nil {
		t.Fatalf("%d requests", len(reqs))
	}
	var answered []string
	for _, m := range req.Messages {
		if m.Role == "tool" {
			answered = append(answered, m.ToolCallID)
		}
	}
	if want := []string{"call_1", "call_2", "call_3"}; !slices.Equal(answered, want) {
		t.Errorf("the next request answers the calls %q, want %q", answered, want)
	}
	if got := toolsettest.CallsReceived(srv); len(got) != 1 {
		t.Errorf("the server received %q, want the first call only", got)
	}
}
