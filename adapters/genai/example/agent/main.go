// The agent command runs a tool loop with Google's Gen AI Go SDK
// (generateContent) over the MCP servers of an mcpServers file: the
// servers' tools are declared to Gemini, its function calls run on the
// servers and the function responses go back, until it answers.
//
// Usage:
//
//	agent [-config mcp.json] [-model gemini-2.5-flash] [-jsonschema] [prompt]
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

	"google.golang.org/genai"

	genaiconduit "github.com/conduitmcp/conduit/adapters/genai"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func main() {
	config := flag.String("config", "", "mcpServers file (default: Conduit's test server)")
	model := flag.String("model", "gemini-2.5-flash", "model")
	jsonSchema := flag.Bool("jsonschema", false, "declare parametersJsonSchema instead of parameters")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "Use a tool to echo: hello from MCP"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *config, *model, prompt, *jsonSchema, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config, model, prompt string, jsonSchema bool, out io.Writer) error {
	h, stop, err := toolsettest.DemoHost(ctx, config)
	if err != nil {
		return err
	}
	defer stop()
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
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
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		return err
	}
	contents := []*genai.Content{genai.NewContentFromText(prompt, genai.RoleUser)}
	for range 8 {
		resp, done, err := genaiconduit.ContentTurn(ctx, client, model, set, &contents, nil, &genaiconduit.Options{JSONSchema: jsonSchema})
		if err != nil {
			return err
		}
		if done {
			fmt.Fprintln(out, resp.Text())
			return nil
		}
		for _, fc := range resp.FunctionCalls() {
			args, _ := json.Marshal(fc.Args)
			fmt.Fprintf(out, "called %s %s\n", fc.Name, args)
		}
	}
	return fmt.Errorf("no answer after 8 turns")
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
