// The conduit command is the agent of the lines-of-code comparison in the
// README, with Conduit: an ADK agent over the servers of an mcpServers
// file. Usage: conduit mcp.json "prompt" (GEMINI_API_KEY set). Its twin
// in ../mcptoolset does the same with ADK's own mcptoolset.
package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"os"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	adkconduit "github.com/conduitmcp/conduit/adapters/adk"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/toolset"
)

func main() {
	cc := &genai.ClientConfig{APIKey: os.Getenv("GEMINI_API_KEY"), Backend: genai.BackendGeminiAPI}
	if err := run(context.Background(), os.Args[1], cc, os.Args[2], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, path string, cc *genai.ClientConfig, prompt string, out io.Writer) error {
	cfg, err := host.Load(path, nil)
	if err != nil {
		return err
	}
	h, err := host.Start(cfg, nil)
	if err != nil {
		return err
	}
	defer h.Close()
	if err := h.Wait(ctx); err != nil {
		return err
	}
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
	if err != nil {
		return err
	}
	tools, err := adkconduit.New(set, nil)
	if err != nil {
		return err
	}
	m, err := gemini.NewModel(ctx, "gemini-2.5-flash", cc)
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Toolsets: []tool.Toolset{tools}})
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
		if ev.Content != nil && ev.IsFinalResponse() {
			for _, p := range ev.Content.Parts {
				fmt.Fprint(out, p.Text)
			}
		}
	}
	return nil
}
