package openaiconduit_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"

	openaiconduit "github.com/conduitmcp/conduit/adapters/openai"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func responsesScript(t *testing.T) toolsettest.Script {
	return func(n int, path string, body []byte) (int, any) {
		if path != "/v1/responses" {
			t.Errorf("path %s", path)
		}
		output := []any{map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": "The answer is 42.", "annotations": []any{}}}}}
		if n == 0 {
			output = nil
			for i, c := range modelCalls {
				output = append(output, map[string]any{"type": "function_call", "id": "fc_" + string(rune('1'+i)), "call_id": c[0], "name": c[1], "arguments": c[2], "status": "completed"})
			}
		}
		return 200, map[string]any{"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-test", "status": "completed", "output": output}
	}
}

// TestResponseTurnOnTheWire drives the SDK's responses API against a
// scripted endpoint and real MCP servers of both eras.
func TestResponseTurnOnTheWire(t *testing.T) {
	servers := toolsettest.StartServers(t)
	ctx := testContext(t)
	set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
	if err != nil {
		t.Fatal(err)
	}
	ep := toolsettest.NewEndpoint(t, responsesScript(t))
	client := newClient(ep.URL)
	params := responses.ResponseNewParams{Model: "gpt-test", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is 19+23?")}}
	for turns, done := 0, false; !done; turns++ {
		if turns > 3 {
			t.Fatal("the loop did not end")
		}
		var resp *responses.Response
		resp, done, err = openaiconduit.ResponseTurn(ctx, client, set, &params, &openaiconduit.Options{Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if done && resp.OutputText() != "The answer is 42." {
			t.Fatalf("answer %q", resp.OutputText())
		}
	}
	reqs := ep.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	var first struct {
		Tools []struct {
			Type       string          `json:"type"`
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
			Strict     bool            `json:"strict"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(reqs[0], &first); err != nil || len(first.Tools) != len(set.Tools()) {
		t.Fatalf("%v: %d tools", err, len(first.Tools))
	}
	for _, tool := range first.Tools {
		if err := toolsettest.Check(toolset.OpenAI, tool.Name, tool.Parameters, tool.Strict); err != nil || tool.Type != "function" {
			t.Errorf("%s: %v", tool.Type, err)
		}
	}
	checkResponseInput(t, reqs[1])
}

func checkResponseInput(t *testing.T, body []byte) {
	t.Helper()
	var second struct {
		Input []struct {
			Type   string          `json:"type"`
			Role   string          `json:"role"`
			CallID string          `json:"call_id"`
			Output json.RawMessage `json:"output"`
		} `json:"input"`
	}
	if err := json.Unmarshal(body, &second); err != nil {
		t.Fatal(err)
	}
	calls, outputs := 0, 0
	for _, item := range second.Input {
		switch item.Type {
		case "function_call":
			calls++
		case "function_call_output":
			outputs++
			var text string
			_ = json.Unmarshal(item.Output, &text)
			if !strings.Contains(text, wantResults[item.CallID]) {
				t.Errorf("%s: output %q, want %q in it", item.CallID, text, wantResults[item.CallID])
			}
		}
	}
	if calls != len(modelCalls) || outputs != len(modelCalls) || second.Input[0].Role != "user" {
		t.Errorf("input: %d calls, %d outputs: %s", calls, outputs, body)
	}
}

// TestFunctionCallOutputImages: a result with an image goes to the
// responses API as input_text and input_image items.
func TestFunctionCallOutputImages(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	r := (&toolset.Set{}).Result("shot", &protocol.CallToolResult{Content: []protocol.Content{
		protocol.TextContent("a screenshot"), protocol.ImageContent(png, "image/png")}})
	item := openaiconduit.FunctionCallOutput("call_9", r, nil)
	got, err := json.Marshal(item)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"call_id":"call_9","output":[{"text":"a screenshot","type":"input_text"},{"image_url":"data:image/png;base64,` + png + `","type":"input_image"}],"type":"function_call_output"}`
	var g, w any
	_ = json.Unmarshal(got, &g)
	_ = json.Unmarshal([]byte(want), &w)
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
