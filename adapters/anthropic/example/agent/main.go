// The agent command runs a tool loop with the Anthropic Go SDK (the
// messages API) over the MCP servers of an mcpServers file: the servers'
// tools are declared to Claude, its tool_use blocks run on the servers
// and the tool_result blocks go back, until it answers.
//
// Usage:
//
//	agent [-config mcp.json] [-model claude-sonnet-4-5] [-strict] [prompt]
//
// With ANTHROPIC_API_KEY set it asks the real API (ANTHROPIC_BASE_URL
// applies). Without it, it asks a scripted model served on 127.0.0.1,
// which calls the first tool named like "echo" with the prompt, then
// answers with what the tool said: the loop runs without a key. Without
// -config it serves Conduit's test server.
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

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	anthropicconduit "github.com/conduitmcp/conduit/adapters/anthropic"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func main() {
	config := flag.String("config", "", "mcpServers file (default: Conduit's test server)")
	model := flag.String("model", "claude-sonnet-4-5", "model")
	strict := flag.Bool("strict", false, "declare the tools with strict: true")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "Use a tool to echo: hello from MCP"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *config, *model, prompt, *strict, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config, model, prompt string, strict bool, out io.Writer) error {
	h, stop, err := toolsettest.DemoHost(ctx, config)
	if err != nil {
		return err
	}
	defer stop()
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
	if err != nil {
		return err
	}
	var opts []option.RequestOption
	if os.Getenv("ANTHROPIC_API_KEY") == "" {
		ep, stopModel := toolsettest.StartEndpoint(scriptedModel)
		defer stopModel()
		opts = append(opts, option.WithBaseURL(ep.URL+"/"), option.WithAPIKey("no-key"))
		fmt.Fprintln(out, "(no ANTHROPIC_API_KEY: a scripted model answers)")
	}
	client := anthropic.NewClient(opts...)
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: 1024,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(prompt))}}
	for range 8 {
		msg, done, err := anthropicconduit.MessageTurn(ctx, &client, set, &params, &anthropicconduit.Options{Strict: strict})
		if err != nil {
			return err
		}
		for _, c := range msg.Content {
			switch {
			case c.Type == "tool_use":
				fmt.Fprintf(out, "called %s %s\n", c.Name, c.Input)
			case c.Type == "text" && done:
				fmt.Fprintln(out, c.Text)
			}
		}
		if done {
			return nil
		}
	}
	return fmt.Errorf("no answer after 8 turns")
}

// scriptedModel answers the messages API as a model would: a tool_use of
// the echo tool first, then an answer with its result.
func scriptedModel(_ int, _ string, body []byte) (int, any) {
	var req struct {
		Tools    []struct{ Name string } `json:"tools"`
		Messages []struct {
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	last := req.Messages[len(req.Messages)-1].Content[0]
	content := []any{}
	stop := "end_turn"
	switch {
	case last.Type == "tool_result" && len(last.Content) > 0:
		content = append(content, map[string]any{"type": "text", "text": "The tool said: " + last.Content[0].Text})
	default:
		for _, t := range req.Tools {
			if strings.HasSuffix(t.Name, "echo") {
				content = append(content, map[string]any{"type": "tool_use", "id": "toolu_1", "name": t.Name, "input": map[string]string{"text": last.Text}})
				stop = "tool_use"
				break
			}
		}
	}
	return 200, map[string]any{"id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted", "content": content,
		"stop_reason": stop, "usage": map[string]any{"input_tokens": 0, "output_tokens": 0}}
}
