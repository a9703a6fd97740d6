package adkconduit_test

import (
	"context"
	"encoding/json"
	"testing"

	"google.golang.org/adk/agent"

	adkconduit "github.com/conduitmcp/conduit/adapters/adk"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/toolset"
)

// toolContext is the context a tool's Run gets: only its context.Context
// is used by the adapter.
type toolContext struct {
	agent.ToolContext
	ctx context.Context
}

func (c toolContext) Done() <-chan struct{} { return c.ctx.Done() }
func (c toolContext) Err() error            { return c.ctx.Err() }
func (c toolContext) Value(k any) any       { return c.ctx.Value(k) }

// BenchmarkToolCall measures what the ADK tool adds to Set.Call on an
// in-memory test server: "set" is Set.Call with the arguments text,
// "adk" is the tool's Run as ADK's flow calls it, with the arguments
// the model's function call holds (encoded for the Set, the result
// decoded for the response map).
func BenchmarkToolCall(b *testing.B) {
	srv := conduittest.NewServer(b)
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	set, err := toolset.Load(ctx, toolset.FromClient(c), nil)
	if err != nil {
		b.Fatal(err)
	}
	ts, err := adkconduit.New(set, nil)
	if err != nil {
		b.Fatal(err)
	}
	tools, _ := ts.Tools(nil)
	var run interface {
		Run(agent.ToolContext, any) (map[string]any, error)
	}
	for _, t := range tools {
		if t.Name() == "echo" {
			run, _ = t.(interface {
				Run(agent.ToolContext, any) (map[string]any, error)
			})
		}
	}
	if run == nil {
		b.Fatal("no echo tool with Run")
	}
	text := `{"text":"hello, tool"}`
	var args map[string]any
	_ = json.Unmarshal([]byte(text), &args)
	b.Run("set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := set.Call(ctx, "echo", text); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adk", func(b *testing.B) {
		b.ReportAllocs()
		tc := toolContext{ctx: ctx}
		for b.Loop() {
			if out, err := run.Run(tc, args); err != nil || out["output"] != "hello, tool" {
				b.Fatal(out, err)
			}
		}
	})
}
