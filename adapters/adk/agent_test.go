package adkconduit_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"google.golang.org/adk/model"
	"google.golang.org/genai"

	adkconduit "github.com/conduitmcp/conduit/adapters/adk"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

var modelCalls = []struct{ id, name, args, key, want string }{
	{"c1", "modern__echo", `{"text":"hi"}`, "output", `"hi"`},
	{"c2", "legacy__add", `{"a":19,"b":23}`, "output", `{"sum":42}`},
	{"c3", "modern__structured", `{"city":"Paris"}`, "output", `"temperature":`},
	{"c4", "modern__fail", `{"message":"boom"}`, "error", "boom"},
	{"c5", "no_such_tool", `{}`, "error", "not found"},
}

func toolCalls(n int) *model.LLMResponse {
	if n > 0 {
		return modelContent(genai.NewPartFromText("The answer is 42."))
	}
	var parts []*genai.Part
	for _, c := range modelCalls {
		var args map[string]any
		_ = json.Unmarshal([]byte(c.args), &args)
		parts = append(parts, &genai.Part{FunctionCall: &genai.FunctionCall{ID: c.id, Name: c.name, Args: args}})
	}
	return modelContent(parts...)
}

// agentModel is the model of a run of TestAgentLoop and what it received.
type agentModel struct {
	model.LLM
	requests func() [][]byte
	wire     bool // requests are generateContent bodies
}

// TestAgentLoop runs ADK's own agent loop (llmagent, runner, in-memory
// sessions) against real MCP servers of both eras, with each way of
// declaring parameters and two models: a scripted model.LLM, and ADK's
// Gemini model whose client sends generateContent to a scripted
// endpoint. The model receives declarations that pass the Gemini checker
// and the tools' answers, and the MCP server runs the calls.
func TestAgentLoop(t *testing.T) {
	servers := toolsettest.StartServers(t)
	models := map[string]func(t *testing.T) agentModel{
		"scripted": func(t *testing.T) agentModel {
			m := &scriptedModel{script: toolCalls}
			return agentModel{m, m.Requests, false}
		},
		"gemini": func(t *testing.T) agentModel {
			ep := toolsettest.NewEndpoint(t, func(n int, path string, body []byte) (int, any) {
				resp := toolCalls(n)
				var parts []any
				for _, p := range resp.Content.Parts {
					parts = append(parts, p)
				}
				return 200, candidate(parts...)
			})
			return agentModel{geminiModel(t, ep), ep.Requests, true}
		},
	}
	for _, name := range []string{"scripted", "gemini"} {
		for _, schemaType := range []bool{false, true} {
			t.Run(name+"/"+map[bool]string{false: "jsonschema", true: "schema"}[schemaType], func(t *testing.T) {
				agentLoop(t, servers, models[name](t), schemaType)
			})
		}
	}
}

func agentLoop(t *testing.T, servers *toolsettest.Servers, m agentModel, schemaType bool) {
	servers.Modern.Reset()
	ctx := testContext(t)
	set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := adkconduit.New(set, &adkconduit.Options{SchemaType: schemaType})
	if err != nil {
		t.Fatal(err)
	}
	answer, err := runAgent(t, ctx, m.LLM, ts, "What is 19+23?")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(answer, "The answer is 42.") {
		t.Errorf("answer %q", answer)
	}
	reqs := m.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	checkDeclarations(t, reqs[0], m.wire, len(set.Tools()), schemaType)
	checkResponses(t, reqs[1])
	want := []string{`echo {"text":"hi"}`, `structured {"city":"Paris"}`, `fail {"message":"boom"}`}
	if got := toolsettest.CallsReceived(servers.Modern); !sameSet(got, want) {
		t.Errorf("modern server ran %q, want %q", got, want)
	}
}

// sameSet compares the calls without their order: ADK runs a turn's
// function calls in parallel.
func sameSet(got, want []string) bool {
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	return slices.Equal(got, want)
}

type declaredTools []struct {
	FunctionDeclarations []map[string]json.RawMessage `json:"functionDeclarations"`
}

func checkDeclarations(t *testing.T, body []byte, wire bool, n int, schemaType bool) {
	t.Helper()
	var req struct {
		Tools  declaredTools `json:"tools"` // generateContent's body
		Config struct {
			Tools declaredTools `json:"tools"`
		} `json:"config"` // an LLMRequest
	}
	err := json.Unmarshal(body, &req)
	tools := req.Config.Tools
	if wire {
		tools = req.Tools
	}
	if err != nil || len(tools) != 1 || len(tools[0].FunctionDeclarations) != n {
		t.Fatalf("%v: %s", err, body)
	}
	for _, fd := range tools[0].FunctionDeclarations {
		var name string
		_ = json.Unmarshal(fd["name"], &name)
		d, key, other := toolset.GeminiJSONSchema, "parametersJsonSchema", "parameters"
		if schemaType {
			d, key, other = toolset.Gemini, "parameters", "parametersJsonSchema"
		}
		for _, k := range []string{other, "responseJsonSchema", "response"} {
			if v, ok := fd[k]; ok {
				t.Errorf("%s: %s is %s", name, k, v)
			}
		}
		params, ok := fd[key]
		if !ok && !schemaType || string(params) == "null" {
			t.Errorf("%s: %s is %q", name, key, params)
		}
		if err := toolsettest.Check(d, name, params, false); err != nil && ok {
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
	got := map[string]int{}
	for i, p := range last.Parts {
		if p.FunctionResponse != nil {
			got[p.FunctionResponse.ID] = i
		}
	}
	for _, c := range modelCalls {
		i, ok := got[c.id]
		if !ok {
			t.Errorf("%s: no function response", c.id)
			continue
		}
		fr := last.Parts[i].FunctionResponse
		if fr.Name != c.name || len(fr.Response) != 1 || !strings.Contains(string(fr.Response[c.key]), c.want) {
			t.Errorf("%s: %+v, want %s %s", c.id, fr, c.key, c.want)
		}
	}
}
