// Command mcpgoserver is an MCP server built on github.com/mark3labs/mcp-go
// v1.6.0 with the interop feature set (see package servers).
//
// Flags: -transport stdio|http, -mode dual|modern|legacy, -addr, -tools N.
// mcp-go decides the era per request; -mode narrows the versions it
// advertises in server/discover (and which it accepts on HTTP).
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/conduitmcp/conduit/interop/servers/internal/serve"
)

func main() {
	f := serve.Parse("mcpgoserver")
	versions := f.Versions
	s := build(f.Fillers)

	ctx, stop := serve.SignalContext()
	defer stop()
	switch f.Transport {
	case "stdio":
		var opts []server.StdioOption
		opts = append(opts, server.WithErrorLogger(log.New(os.Stderr, "mcpgoserver: ", 0)))
		if versions != nil {
			opts = append(opts, server.WithStdioContextFunc(func(ctx context.Context) context.Context {
				return server.WithSupportedProtocolVersions(ctx, versions)
			}))
		}
		if err := server.ServeStdio(s, opts...); err != nil && ctx.Err() == nil {
			log.Fatal(err)
		}
	case "http":
		opts := []server.StreamableHTTPOption{server.WithStateful(true)}
		if versions != nil {
			opts = append(opts, server.WithStreamableHTTPProtocolVersions(versions...))
		}
		serve.HTTP(ctx, f.Addr, server.NewStreamableHTTPServer(s, opts...))
	default:
		log.Fatalf("unknown -transport %q", f.Transport)
	}
}

func build(fillers int) *server.MCPServer {
	s := server.NewMCPServer("interop-mcpgoserver", "1.0.0",
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(false, true),
		server.WithInstructions("interop test server (mcp-go)"),
	)
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echoes text"), mcp.WithString("text")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Adds a and b"), mcp.WithNumber("a"), mcp.WithNumber("b")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	s.AddTool(mcp.NewTool("slow-with-progress", mcp.WithDescription("Reports progress steps times"), mcp.WithNumber("steps")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("steps", 3)
			if n <= 0 {
				n = 3
			}
			if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
				srv := server.ServerFromContext(ctx)
				for i := 1; i <= n; i++ {
					if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
						"progressToken": req.Params.Meta.ProgressToken,
						"progress":      i, "total": n,
						"message": fmt.Sprintf("step %d of %d", i, n),
					}); err != nil {
						return nil, err
					}
				}
			}
			return mcp.NewToolResultText("done"), nil
		})
	s.AddTool(mcp.NewTool("ask-name", mcp.WithDescription("Elicits the user's name")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r := server.ElicitationResponse(req.Params.InputResponses, "name"); r != nil {
				if r.Action != mcp.ElicitationResponseActionAccept {
					return mcp.NewToolResultText("no name (" + string(r.Action) + ")"), nil
				}
				content, _ := r.Content.(map[string]any)
				name, _ := content["name"].(string)
				return mcp.NewToolResultText("Hello, " + name + "!"), nil
			}
			return server.NewInputRequestBuilder("").Elicit("name", mcp.ElicitationParams{
				Mode:    mcp.ElicitationModeForm,
				Message: "What is your name?",
				RequestedSchema: map[string]any{
					"type":       "object",
					"properties": map[string]any{"name": map[string]any{"type": "string"}},
					"required":   []string{"name"},
				},
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("sample", mcp.WithDescription("Asks the client's LLM a question")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if r := server.SamplingResponse(req.Params.InputResponses, "q"); r != nil {
				if tc, ok := r.Content.(mcp.TextContent); ok {
					return mcp.NewToolResultText("Sampling response: " + tc.Text), nil
				}
				if m, ok := r.Content.(map[string]any); ok {
					if t, ok := m["text"].(string); ok {
						return mcp.NewToolResultText("Sampling response: " + t), nil
					}
				}
				return mcp.NewToolResultText("Sampling response: (non-text)"), nil
			}
			return server.NewInputRequestBuilder("").Sample("q", mcp.CreateMessageParams{
				Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser,
					Content: mcp.NewTextContent("What is the capital of France?")}},
				MaxTokens: 100,
			}).ToolResult(), nil
		})
	s.AddTool(mcp.NewTool("big", mcp.WithDescription("Returns size bytes of text"), mcp.WithNumber("size")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("size", 0)
			if n < 0 || n > 64<<20 {
				return mcp.NewToolResultError("size out of range"), nil
			}
			return mcp.NewToolResultText(strings.Repeat("x", n)), nil
		})
	for i := range fillers {
		s.AddTool(mcp.NewTool(fmt.Sprintf("filler-%04d", i), mcp.WithDescription("Filler tool for list benchmarks"), mcp.WithString("text")),
			func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(req.GetString("text", "")), nil
			})
	}
	s.AddPrompt(mcp.NewPrompt("greet", mcp.WithPromptDescription("Greets someone"),
		mcp.WithArgument("name", mcp.RequiredArgument())),
		func(_ context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("greeting", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("Hello, "+req.Params.Arguments["name"]+"!")),
			}), nil
		})
	s.AddResource(mcp.NewResource("test://static", "static", mcp.WithMIMEType("text/plain")),
		func(_ context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: "static resource"}}, nil
		})
	return s
}
