// Command goserver is an MCP server built on the official Go SDK
// (github.com/modelcontextprotocol/go-sdk v1.8.0) with the interop feature
// set (see package servers).
//
// Flags: -transport stdio|http, -mode dual|modern|legacy, -addr, -tools N.
// The Go SDK serves 2026-07-28 over Streamable HTTP only in stateless mode,
// so -transport http -mode dual|modern runs stateless (no server-to-client
// requests for legacy clients) and -mode legacy runs stateful.
package main

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/conduitmcp/conduit/interop/servers/internal/serve"
)

func main() {
	f := serve.Parse("goserver")
	newServer := func() *mcp.Server { return build(f.Versions, f.Fillers) }

	ctx, stop := serve.SignalContext()
	defer stop()
	switch f.Transport {
	case "stdio":
		if err := newServer().Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
	case "http":
		srv := newServer()
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
			&mcp.StreamableHTTPOptions{Stateless: f.Mode != "legacy"})
		serve.HTTP(ctx, f.Addr, h)
	default:
		log.Fatalf("unknown -transport %q", f.Transport)
	}
}

type echoIn struct {
	Text string `json:"text"`
}
type addIn struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}
type stepsIn struct {
	Steps int `json:"steps,omitempty"`
}
type sizeIn struct {
	Size int `json:"size"`
}
type none struct{}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func build(versions []string, fillers int) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "interop-goserver", Version: "1.0.0"},
		&mcp.ServerOptions{SupportedProtocolVersions: versions, Instructions: "interop test server (go-sdk)"})

	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echoes text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text(in.Text), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b"},
		func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, any, error) {
			return text(fmt.Sprint(in.A + in.B)), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "slow-with-progress", Description: "Reports progress steps times"},
		func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
			n := in.Steps
			if n <= 0 {
				n = 3
			}
			if tok := req.Params.GetProgressToken(); tok != nil {
				for i := 1; i <= n; i++ {
					if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
						ProgressToken: tok, Progress: float64(i), Total: float64(n),
						Message: fmt.Sprintf("step %d of %d", i, n),
					}); err != nil {
						return nil, nil, err
					}
				}
			}
			return text("done"), nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "ask-name", Description: "Elicits the user's name"},
		func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			if r, ok := req.Params.InputResponses["name"].(*mcp.ElicitResult); ok && r != nil {
				if r.Action != "accept" {
					return text("no name (" + r.Action + ")"), nil, nil
				}
				name, _ := r.Content["name"].(string)
				return text("Hello, " + name + "!"), nil, nil
			}
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{
				"name": &mcp.ElicitParams{
					Message: "What is your name?",
					RequestedSchema: map[string]any{
						"type":       "object",
						"properties": map[string]any{"name": map[string]any{"type": "string"}},
						"required":   []string{"name"},
					},
				},
			}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client's LLM a question"},
		func(_ context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			// Sampling is deprecated (SEP-2577) but still part of both eras;
			// the interop tests exercise it on purpose.
			//lint:ignore SA1019 sampling is exercised on purpose
			if r, ok := req.Params.InputResponses["q"].(*mcp.CreateMessageWithToolsResult); ok && r != nil {
				for _, c := range r.Content {
					if tc, ok := c.(*mcp.TextContent); ok {
						return text("Sampling response: " + tc.Text), nil, nil
					}
				}
				return text("Sampling response: (non-text)"), nil, nil
			}
			//lint:ignore SA1019 sampling is exercised on purpose
			params := &mcp.CreateMessageParams{MaxTokens: 100}
			//lint:ignore SA1019 sampling is exercised on purpose
			msg := &mcp.SamplingMessage{Role: "user", Content: &mcp.TextContent{Text: "What is the capital of France?"}}
			params.Messages = append(params.Messages, msg)
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": params}}, nil, nil
		})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "Returns size bytes of text"},
		func(_ context.Context, _ *mcp.CallToolRequest, in sizeIn) (*mcp.CallToolResult, any, error) {
			if in.Size < 0 || in.Size > 64<<20 {
				return nil, nil, fmt.Errorf("size out of range")
			}
			return text(strings.Repeat("x", in.Size)), nil, nil
		})
	for i := range fillers {
		mcp.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("filler-%04d", i), Description: "Filler tool for list benchmarks"},
			func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
				return text(in.Text), nil, nil
			})
	}

	s.AddPrompt(&mcp.Prompt{Name: "greet", Description: "Greets someone",
		Arguments: []*mcp.PromptArgument{{Name: "name", Required: true}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{
				Role: "user", Content: &mcp.TextContent{Text: "Hello, " + req.Params.Arguments["name"] + "!"},
			}}}, nil
		})
	s.AddResource(&mcp.Resource{Name: "static", URI: "test://static", MIMEType: "text/plain"},
		func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
				URI: req.Params.URI, MIMEType: "text/plain", Text: "static resource",
			}}}, nil
		})
	return s
}
