package adkconduit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	adkconduit "github.com/conduitmcp/conduit/adapters/adk"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// TestRunContextEnds: when the run's context ends during a tool call, the
// call stops on the server side and the run ends with the context's error
// instead of asking the model again.
func TestRunContextEnds(t *testing.T) {
	servers := toolsettest.StartServers(t)
	ctx, cancel := context.WithCancel(testContext(t))
	defer cancel()
	set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := adkconduit.New(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{script: func(n int) *model.LLMResponse {
		if n > 0 {
			return modelContent(genai.NewPartFromText("asked again"))
		}
		return modelContent(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "s1", Name: "modern__slow", Args: map[string]any{"steps": 1, "delayMs": 30000}}})
	}}
	go func() {
		for i := 0; i < 200 && len(toolsettest.CallsReceived(servers.Modern)) == 0; i++ {
			time.Sleep(25 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	answer, err := runAgent(t, ctx, m, ts, "Count slowly.")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("run ended with %v, answer %q; want context.Canceled", err, answer)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the run took %v: the call was not stopped", d)
	}
	if n := len(m.Requests()); n != 1 {
		t.Errorf("the model was asked %d times, want 1", n)
	}
	if got := toolsettest.CallsReceived(servers.Modern); len(got) != 1 {
		t.Errorf("modern server ran %q", got)
	}
}

// TestToolErrorInCallback: the error an isError result gives ADK is a
// *ToolError with the server's result, which ADK's tool callbacks see.
func TestToolErrorInCallback(t *testing.T) {
	servers := toolsettest.StartServers(t)
	ctx := testContext(t)
	set, err := toolset.Load(ctx, toolset.FromHost(servers.Host), nil)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := adkconduit.New(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := &scriptedModel{script: func(n int) *model.LLMResponse {
		if n > 0 {
			return modelContent(genai.NewPartFromText("It failed."))
		}
		return modelContent(&genai.Part{FunctionCall: &genai.FunctionCall{ID: "f1", Name: "modern__fail", Args: map[string]any{"message": "boom"}}})
	}}
	var seen error
	_, err = runAgent(t, ctx, m, ts, "Fail.", func(c *llmagent.Config) {
		c.AfterToolCallbacks = append(c.AfterToolCallbacks, func(_ agent.ToolContext, _ tool.Tool, _, _ map[string]any, err error) (map[string]any, error) {
			seen = err
			return nil, nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	var te *adkconduit.ToolError
	if !errors.As(seen, &te) || te.Err != nil || te.Result.Raw == nil || !te.Result.IsError || !strings.Contains(te.Error(), "boom") {
		t.Fatalf("callback saw %#v", seen)
	}
}
