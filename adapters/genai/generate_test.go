package genaiconduit_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genai"

	genaiconduit "github.com/conduitmcp/conduit/adapters/genai"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

var modelCalls = []struct{ id, name, args, key, want string }{
	{"c1", "modern__echo", `{"text":"hi"}`, "output", `"hi"`},
	{"c2", "legacy__add", `{"a":19,"b":23}`, "output", `{"sum":42}`},
	{"c3", "modern__fail", `{"message":"boom"}`, "error", "boom"},
	{"c4", "no_such_tool", `{}`, "error", "There is no tool"},
}

func generateScript(t *testing.T) toolsettest.Script {
	return func(n int, path string, body []byte) (int, any) {
		if !strings.HasSuffix(path, "/models/gemini-test:generateContent") {
			t.Errorf("path %s", path)
		}
		if n > 0 {
			return 200, candidate(map[string]any{"text": "The answer is 42."})
		}
		var parts []any
		for _, c := range modelCalls {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"id": c.id, "name": c.name, "args": json.RawMessage(c.args)}})
		}
		return 200, candidate(parts...)
	}
}

// TestContentTurnOnTheWire drives the real SDK client against a scripted
// generateContent endpoint and real MCP servers of both eras, with each
// way of declaring parameters.
func TestContentTurnOnTheWire(t *testing.T) {
	servers := toolsettest.StartServers(t)
	for _, jsonSchema := range []bool{false, true} {
		t.Run(map[bool]string{false: "schema", true: "jsonschema"}[jsonSchema], func(t *testing.T) {
			servers.Modern.Reset()
			ctx := testContext(t)
			set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
			if err != nil {
				t.Fatal(err)
			}
			ep := toolsettest.NewEndpoint(t, generateScript(t))
			client := newClient(t, ep.URL)
			contents := []*genai.Content{genai.NewContentFromText("What is 19+23?", genai.RoleUser)}
			for turns, done := 0, false; !done; turns++ {
				if turns > 3 {
					t.Fatal("the loop did not end")
				}
				var resp *genai.GenerateContentResponse
				resp, done, err = genaiconduit.ContentTurn(ctx, client, "gemini-test", set, &contents, nil, &genaiconduit.Options{JSONSchema: jsonSchema})
				if err != nil {
					t.Fatal(err)
				}
				if done && resp.Text() != "The answer is 42." {
					t.Fatalf("answer %q", resp.Text())
				}
			}
			reqs := ep.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d requests", len(reqs))
			}
			checkDeclarations(t, reqs[0], len(set.Tools()), jsonSchema)
			checkResponses(t, reqs[1])
			if got, want := toolsettest.CallsReceived(servers.Modern), []string{`echo {"text":"hi"}`, `fail {"message":"boom"}`}; !slices.Equal(got, want) {
				t.Errorf("modern server ran %q, want %q", got, want)
			}
		})
	}
}

func checkDeclarations(t *testing.T, body []byte, n int, jsonSchema bool) {
	t.Helper()
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct {
				Name                 string          `json:"name"`
				Parameters           json.RawMessage `json:"parameters"`
				ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
			} `json:"functionDeclarations"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Tools) != 1 || len(req.Tools[0].FunctionDeclarations) != n {
		t.Fatalf("%v: %s", err, body)
	}
	for _, fd := range req.Tools[0].FunctionDeclarations {
		d, params, other := toolset.Gemini, fd.Parameters, fd.ParametersJSONSchema
		if jsonSchema {
			d, params, other = toolset.GeminiJSONSchema, fd.ParametersJSONSchema, fd.Parameters
		}
		if other != nil {
			t.Errorf("%s: both parameters and parametersJsonSchema", fd.Name)
		}
		if err := toolsettest.Check(d, fd.Name, params, false); err != nil {
			t.Error(err)
		}
	}
}

func checkResponses(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					ID       string                     `json:"id"`
					Name     string                     `json:"name"`
					Response map[string]json.RawMessage `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(body, &req); err != nil || len(req.Contents) != 3 {
		t.Fatalf("%v: %s", err, body)
	}
	last := req.Contents[2]
	if last.Role != "user" || len(last.Parts) != len(modelCalls) {
		t.Fatalf("last content %s", body)
	}
	for i, c := range modelCalls {
		fr := last.Parts[i].FunctionResponse
		if fr == nil || fr.ID != c.id || fr.Name != c.name || !strings.Contains(string(fr.Response[c.key]), c.want) {
			t.Errorf("%s: %+v, want %s %s", c.id, fr, c.key, c.want)
		}
	}
}

// TestContentTurnNullPart: a null among the parts of the model's answer
// is skipped: the function call beside it runs once and is answered,
// and the next turn asks the model again. ContentTurn panicked (in the
// SDK's FunctionCalls, which dereferences every part).
func TestContentTurnNullPart(t *testing.T) {
	ctx := testContext(t)
	srv, set := toolsettest.LoadServer(ctx, t, conduittest.Modern)
	var err error
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		if n > 0 {
			return 200, candidate(map[string]any{"text": "Done."})
		}
		return 200, candidate(nil, map[string]any{"functionCall": map[string]any{"id": "c1", "name": "echo", "args": map[string]any{"text": "hi"}}}, nil)
	})
	contents := []*genai.Content{genai.NewContentFromText("Say hi.", genai.RoleUser)}
	for turns, done := 0, false; !done; turns++ {
		if turns > 3 {
			t.Fatal("the loop did not end")
		}
		if _, done, err = genaiconduit.ContentTurn(ctx, newClient(t, ep.URL), "gemini-test", set, &contents, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := toolsettest.CallsReceived(srv), []string{`echo {"text":"hi"}`}; !slices.Equal(got, want) {
		t.Errorf("the server ran %q, want %q", got, want)
	}
	if reqs := ep.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1]), `"functionResponse"`) {
		t.Errorf("%d requests, want 2, the second with the functionResponse", len(reqs))
	}
}

// TestContentTurnCancelledAnswersEveryCall: when ctx ends while a tool
// runs, every function call of the model's content still gets its
// functionResponse in the content after it (the call that was cut and
// those not run say so), so that the conversation goes on in the next
// turn: that content was left out, and the API refuses a conversation
// whose function responses do not match its function calls.
func TestContentTurnCancelledAnswersEveryCall(t *testing.T) {
	ctx := testContext(t)
	srv, set := toolsettest.LoadServer(ctx, t, conduittest.Modern)
	ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
		if n > 0 {
			return 200, candidate(map[string]any{"text": "Stopped."})
		}
		return 200, candidate(
			map[string]any{"functionCall": map[string]any{"id": "c1", "name": "slow", "args": map[string]any{"steps": 1, "delayMs": 60000}}},
			map[string]any{"functionCall": map[string]any{"id": "c2", "name": "echo", "args": map[string]any{"text": "hi"}}},
			map[string]any{"functionCall": map[string]any{"id": "c3", "name": "echo", "args": map[string]any{"text": "late"}}},
		)
	})
	contents := []*genai.Content{genai.NewContentFromText("Go.", genai.RoleUser)}
	turnCtx, cancel := context.WithCancel(ctx)
	go func() {
		// The slow call, the first, is running: the user stops the turn.
		_, _ = srv.WaitReceived(ctx, "tools/call")
		cancel()
	}()
	if _, _, err := genaiconduit.ContentTurn(turnCtx, newClient(t, ep.URL), "gemini-test", set, &contents, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("ContentTurn = %v, want context.Canceled", err)
	}
	contents = append(contents, genai.NewContentFromText("Go on.", genai.RoleUser))
	if _, _, err := genaiconduit.ContentTurn(ctx, newClient(t, ep.URL), "gemini-test", set, &contents, nil, nil); err != nil {
		t.Fatal(err)
	}
	var req struct {
		Contents []struct {
			Role  string `json:"role"`
			Parts []struct {
				FunctionResponse *struct {
					ID string `json:"id"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	if reqs := ep.Requests(); len(reqs) != 2 || json.Unmarshal(reqs[1], &req) != nil || len(req.Contents) < 3 {
		t.Fatalf("%d requests", len(ep.Requests()))
	}
	var answered []string
	for _, p := range req.Contents[2].Parts {
		if p.FunctionResponse != nil {
			answered = append(answered, p.FunctionResponse.ID)
		}
	}
	if want := []string{"c1", "c2", "c3"}; req.Contents[1].Role != "model" || !slices.Equal(answered, want) {
		t.Errorf("the content after the function calls answers %q, want %q", answered, want)
	}
	if got := toolsettest.CallsReceived(srv); len(got) != 1 {
		t.Errorf("the server received %q, want the first call only", got)
	}
}
