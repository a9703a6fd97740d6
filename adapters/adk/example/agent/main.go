// The agent command runs an ADK agent (llmagent, runner, in-memory
// sessions, ADK's Gemini model) over the MCP servers of an mcpServers
// file: the servers' tools reach the agent as one tool.Toolset, and ADK's
// own loop runs the model's calls on the servers until it answers.
//
// Usage:
//
//	agent [-config mcp.json] [-model gemini-2.5-flash] [prompt]
//
// With GEMINI_API_KEY (or GOOGLE_API_KEY) set it asks the real API.
// Without it, it asks a scripted model served on 127.0.0.1, which calls
// the first tool named like "echo" with the prompt, then answers with
// what the tool said: the loop runs without a key. Without -config it
// serves Conduit's test server.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	adkconduit "github.com/conduitmcp/conduit/adapters/adk"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func main() {
	config := flag.String("config", "", "mcpServers file (default: Conduit's test server)")
	model := flag.String("model", "gemini-2.5-flash", "model")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "Use a tool to echo: hello from MCP"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *config, *model, prompt, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config, modelName, prompt string, out io.Writer) error {
	h, stop, err := toolsettest.DemoHost(ctx, config)
	if err != nil {
		return err
	}
	defer stop()
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
	if err != nil {
		return err
	}
	tools, err := adkconduit.New(set, nil)
	if err != nil {
		return err
	}
	cc := &genai.ClientConfig{Backend: genai.BackendGeminiAPI}
	if os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_API_KEY") == "" {
		ep, stopModel := toolsettest.StartEndpoint(scriptedModel)
		defer stopModel()
		cc.APIKey, cc.HTTPOptions.BaseURL = "no-key", ep.URL+"/"
		fmt.Fprintln(out, "(no GEMINI_API_KEY: a scripted model answers)")
	}
	m, err := gemini.NewModel(ctx, modelName, cc)
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Instruction: "Use the tools to answer.", Toolsets: []tool.Toolset{tools}})
	if err != nil {
		return err
	}
	r, err := runner.New(runner.Config{AppName: "agent", Agent: a, SessionService: session.InMemoryService(), AutoCreateSession: true})
	if err != nil {
		return err
	}
	for ev, err := range r.Run(ctx, "user", "session", genai.NewContentFromText(prompt, genai.RoleUser), agent.RunConfig{}) {
		if err != nil {
			return err
		}
		if ev.Content == nil {
			continue
		}
		for _, p := range ev.Content.Parts {
			switch {
			case p.FunctionCall != nil:
				args, _ := json.Marshal(p.FunctionCall.Args)
				fmt.Fprintf(out, "called %s %s\n", p.FunctionCall.Name, args)
			case p.Text != "":
				fmt.Fprintln(out, p.Text)
			}
		}
	}
	return nil
}

// scriptedModel answers generateContent as a model would: a call of the
// echo tool first, then an answer with its result.
func scriptedModel(_ int, _ string, body []byte) (int, any) {
	var req struct {
		Tools []struct {
			FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
		} `json:"tools"`
		Contents []struct {
			Parts []struct {
				Text             string `json:"text"`
				FunctionResponse *struct {
					Response struct {
						Output string `json:"output"`
					} `json:"response"`
				} `json:"functionResponse"`
			} `json:"parts"`
		} `json:"contents"`
	}
	_ = json.Unmarshal(body, &req)
	last := req.Contents[len(req.Contents)-1].Parts[0]
	part := map[string]any{"text": "I have no echo tool."}
	switch {
	case last.FunctionResponse != nil:
		part = map[string]any{"text": "The tool said: " + last.FunctionResponse.Response.Output}
	case len(req.Tools) > 0:
		for _, fd := range req.Tools[0].FunctionDeclarations {
			if strings.HasSuffix(fd.Name, "echo") {
				part = map[string]any{"functionCall": map[string]any{"id": "f1", "name": fd.Name, "args": map[string]string{"text": last.Text}}}
				break
			}
		}
	}
	return 200, map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP"}}}
}
