// The agent command runs a tool loop with the OpenAI Go SDK (chat
// completions) over the MCP servers of an mcpServers file: the servers'
// tools are declared to the model, its calls run on the servers and the
// results go back, until the model answers.
//
// Usage:
//
//	agent [-config mcp.json] [-model gpt-5-mini] [-strict] [prompt]
//
// With OPENAI_API_KEY set it asks the real API (OPENAI_BASE_URL and the
// SDK's other variables apply). Without it, it asks a scripted model
// served on 127.0.0.1, which calls the first tool named like "echo" with
// the prompt, then answers with what the tool said: the loop runs
// without a key. Without -config it serves Conduit's test server.
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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	openaiconduit "github.com/conduitmcp/conduit/adapters/openai"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func main() {
	config := flag.String("config", "", "mcpServers file (default: Conduit's test server)")
	model := flag.String("model", "gpt-5-mini", "model")
	strict := flag.Bool("strict", false, "declare the tools in strict mode")
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
	if os.Getenv("OPENAI_API_KEY") == "" {
		ep, stopModel := toolsettest.StartEndpoint(scriptedModel)
		defer stopModel()
		opts = append(opts, option.WithBaseURL(ep.URL+"/v1/"), option.WithAPIKey("no-key"))
		fmt.Fprintln(out, "(no OPENAI_API_KEY: a scripted model answers)")
	}
	client := openai.NewClient(opts...)
	params := openai.ChatCompletionNewParams{Model: model, Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage(prompt)}}
	for range 8 {
		resp, done, err := openaiconduit.ChatTurn(ctx, &client, set, &params, &openaiconduit.Options{Strict: strict})
		if err != nil {
			return err
		}
		if done {
			fmt.Fprintln(out, resp.Choices[0].Message.Content)
			return nil
		}
		for _, tc := range resp.Choices[0].Message.ToolCalls {
			fmt.Fprintf(out, "called %s %s\n", tc.Function.Name, tc.Function.Arguments)
		}
	}
	return fmt.Errorf("no answer after 8 turns")
}

// scriptedModel answers chat completions as a model would: a call of the
// echo tool first, then an answer with its result.
func scriptedModel(_ int, _ string, body []byte) (int, any) {
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(body, &req)
	last := req.Messages[len(req.Messages)-1]
	var text string
	_ = json.Unmarshal(last.Content, &text)
	msg := map[string]any{"role": "assistant", "content": "The tool said: " + text}
	if last.Role == "user" {
		for _, t := range req.Tools {
			if strings.HasSuffix(t.Function.Name, "echo") {
				args, _ := json.Marshal(map[string]string{"text": text})
				msg = map[string]any{"role": "assistant", "tool_calls": []any{map[string]any{"id": "call_1", "type": "function",
					"function": map[string]any{"name": t.Function.Name, "arguments": string(args)}}}}
				break
			}
		}
	}
	return 200, map[string]any{"id": "scripted", "object": "chat.completion", "created": 0, "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "message": msg}}}
}
