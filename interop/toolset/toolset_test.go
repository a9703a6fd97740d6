// Package toolset runs package toolset of Conduit against MCP servers
// nobody here wrote: their tools are declared in every provider dialect,
// each declaration passes that provider's checker, and a model's call is
// routed to the server and its result read back.
package toolset

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/interop/internal/foreign"
	"github.com/conduitmcp/conduit/interop/internal/testenv"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
	"github.com/conduitmcp/conduit/transport"
)

func TestMain(m *testing.M) { testenv.Main(m) }

var dialects = []toolset.Dialect{
	toolset.OpenAI, toolset.OpenAIStrict, toolset.Anthropic, toolset.AnthropicStrict, toolset.Gemini, toolset.GeminiJSONSchema,
}

// TestToolsetOnForeignServers declares the tools of each foreign server in every
// dialect and calls its echo tool with arguments as a model writes them.
func TestToolsetOnForeignServers(t *testing.T) {
	for _, s := range []struct {
		kind foreign.Kind
		args string // the echo tool's arguments, as a model writes them
	}{
		{foreign.Everything, `{"message":"hello"}`},
		{foreign.TS, `{"text":"hello"}`},
		{foreign.GoSDK, `{"text":"hello"}`},
		{foreign.MCPGo, `{"text":"hello"}`},
	} {
		t.Run(string(s.kind), func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			argv := foreign.Command(t, s.kind, foreign.Options{})
			c, err := client.Connect(ctx, transport.Command(argv[0], argv[1:]...))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			set, err := toolset.Load(ctx, toolset.FromClient(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(set.Tools()) < 2 {
				t.Fatalf("%d tools", len(set.Tools()))
			}
			for _, d := range dialects {
				decls, err := set.Declarations(d)
				if err != nil {
					t.Errorf("%s: %v", d, err)
				}
				if len(decls) != len(set.Tools()) {
					t.Errorf("%s: %d of %d tools declared", d, len(decls), len(set.Tools()))
				}
				for _, decl := range decls {
					if err := toolsettest.Check(d, decl.Name, decl.Parameters, decl.Strict); err != nil {
						t.Errorf("%s: %s: %v", d, decl.Name, err)
					}
				}
			}
			res, err := set.Call(ctx, "echo", s.args)
			if err != nil || res.IsError || !strings.Contains(res.Text(), "hello") {
				t.Errorf("echo: %v, %+v", err, res)
			}
			// Arguments cut short never reach the server; the model reads why.
			res, err = set.Call(ctx, "echo", s.args[:len(s.args)/2])
			if err == nil || !res.IsError || !strings.Contains(res.Text(), "were not run") {
				t.Errorf("cut arguments: %v, %+v", err, res)
			}
		})
	}
}
