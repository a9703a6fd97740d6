// The mcptoolset command is the agent of the lines-of-code comparison in
// the README, with ADK's own MCP integration (tool/mcptoolset, on the
// official go-sdk): an ADK agent over the servers of an mcpServers file.
// ADK reads no such file, so the program does: stdio servers (command,
// args, env) and Streamable HTTP servers (url, headers). It does not
// expand ${VAR}s, reconnect, or tell apart two servers' tools of the same
// name, which Conduit's host does. Usage: mcptoolset mcp.json "prompt"
// (GEMINI_API_KEY set).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/exec"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/runner"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/adk/tool/mcptoolset"
	"google.golang.org/genai"
)

func main() {
	cc := &genai.ClientConfig{APIKey: os.Getenv("GEMINI_API_KEY"), Backend: genai.BackendGeminiAPI}
	if err := run(context.Background(), os.Args[1], cc, os.Args[2], os.Stdout); err != nil {
		log.Fatal(err)
	}
}

type serverConfig struct {
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

func toolsets(path string) ([]tool.Toolset, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var file struct {
		MCPServers map[string]serverConfig `json:"mcpServers"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, err
	}
	var sets []tool.Toolset
	for _, sc := range file.MCPServers {
		var t mcp.Transport
		if sc.URL != "" {
			t = &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: &http.Client{Transport: headerTransport(sc.Headers)}}
		} else {
			cmd := exec.Command(sc.Command, sc.Args...)
			cmd.Env = os.Environ()
			for k, v := range sc.Env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			t = &mcp.CommandTransport{Command: cmd}
		}
		set, err := mcptoolset.New(mcptoolset.Config{Transport: t})
		if err != nil {
			return nil, err
		}
		sets = append(sets, set)
	}
	return sets, nil
}

func run(ctx context.Context, path string, cc *genai.ClientConfig, prompt string, out io.Writer) error {
	sets, err := toolsets(path)
	if err != nil {
		return err
	}
	m, err := gemini.NewModel(ctx, "gemini-2.5-flash", cc)
	if err != nil {
		return err
	}
	a, err := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Toolsets: sets})
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
