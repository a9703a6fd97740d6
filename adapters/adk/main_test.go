package adkconduit_test

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"sync"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	toolsettest.RemoveBinary()
	os.Exit(code)
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// scriptedModel is a model.LLM that answers the n-th request (from 0)
// with what its script returns, and records each request as JSON.
type scriptedModel struct {
	script func(n int) *model.LLMResponse

	mu       sync.Mutex
	requests [][]byte
}

func (m *scriptedModel) Name() string { return "scripted" }

func (m *scriptedModel) GenerateContent(ctx context.Context, req *model.LLMRequest, _ bool) iter.Seq2[*model.LLMResponse, error] {
	return func(yield func(*model.LLMResponse, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(nil, err)
			return
		}
		body, err := json.Marshal(map[string]any{"model": req.Model, "contents": req.Contents, "config": req.Config})
		if err != nil {
			yield(nil, err)
			return
		}
		m.mu.Lock()
		n := len(m.requests)
		m.requests = append(m.requests, body)
		m.mu.Unlock()
		yield(m.script(n), nil)
	}
}

func (m *scriptedModel) Requests() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.requests...)
}

func modelContent(parts ...*genai.Part) *model.LLMResponse {
	return &model.LLMResponse{Content: genai.NewContentFromParts(parts, genai.RoleModel), FinishReason: genai.FinishReasonStop}
}

// runAgent runs ADK's own loop: an llmagent with the toolset, a runner
// over an in-memory session service, one user message. It returns the
// final text and the run's error.
// configure, when given, changes the agent's config.
func runAgent(t *testing.T, ctx context.Context, m model.LLM, ts tool.Toolset, prompt string, configure ...func(*llmagent.Config)) (string, error) {
	t.Helper()
	cfg := llmagent.Config{Name: "assistant", Model: m, Instruction: "Use the tools.", Toolsets: []tool.Toolset{ts}}
	for _, f := range configure {
		f(&cfg)
	}
	a, err := llmagent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.InMemoryService()
	r, err := runner.New(runner.Config{AppName: "app", Agent: a, SessionService: sessions})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sessions.Create(ctx, &session.CreateRequest{AppName: "app", UserID: "user"})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for ev, err := range r.Run(ctx, "user", s.Session.ID(), genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return text, err
		}
		if ev.Content != nil {
			for _, p := range ev.Content.Parts {
				text += p.Text
			}
		}
	}
	return text, nil
}
