// The agent command shows the loop an agent framework runs on top of an
// MCP client: it turns the server's tools into function definitions for a
// model, lets the model pick calls, runs them with CallTool and feeds the
// results back. The "model" here is a tiny scripted planner so that the
// example runs without an API key; replace plan with a real model call.
//
// Usage:
//
//	agent [url]
//
// Without a URL it serves Conduit's test server (package conduittest) on
// 127.0.0.1 and dials that.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
)

// FunctionDef is the function-calling shape most model APIs accept.
type FunctionDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// FunctionCall is what the model asks for.
type FunctionCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// plan is the stand-in model: given the conversation so far (tool results)
// and the functions it may call, it returns the next call or nil when done.
func plan(history []string, funcs map[string]FunctionDef) *FunctionCall {
	script := []FunctionCall{
		{Name: "add", Arguments: map[string]any{"a": 19, "b": 23}},
		{Name: "echo", Arguments: map[string]any{"text": "the answer is in the history"}},
	}
	for len(history) < len(script) {
		next := script[len(history)]
		if _, ok := funcs[next.Name]; ok {
			return &next
		}
		history = append(history, "skipped")
	}
	return nil
}

func main() {
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	url := flag.Arg(0)
	if url == "" {
		// No server given: serve Conduit's test server (package
		// conduittest) on 127.0.0.1 for the duration of the run.
		srv, err := conduittest.New()
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		url = srv.URL()
	}
	c, err := client.Dial(ctx, url)
	if err != nil {
		log.Fatalf("connecting: %v", err)
	}
	defer c.Close()

	// 1. Expose the server's tools as function definitions.
	funcs := map[string]FunctionDef{}
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatalf("listing tools: %v", err)
		}
		params := tool.InputSchema
		if len(params) == 0 {
			params = json.RawMessage(`{"type":"object"}`)
		}
		funcs[tool.Name] = FunctionDef{Name: tool.Name, Description: tool.Description, Parameters: params}
	}
	defs, _ := json.MarshalIndent([]FunctionDef{funcs["add"], funcs["echo"]}, "", "  ")
	fmt.Printf("%d functions offered to the model, e.g.:\n%s\n", len(funcs), defs)

	// 2. The agent loop: ask the model, run its call, feed back the result.
	var history []string
	for step := 1; step <= 10; step++ {
		call := plan(history, funcs)
		if call == nil {
			break
		}
		res, err := c.CallTool(ctx, call.Name, call.Arguments)
		var out string
		switch {
		case err != nil:
			out = "error: " + err.Error() // errors go back to the model too
		case res.Failed():
			out = "tool error: " + res.Text()
		default:
			out = resultText(res)
		}
		fmt.Printf("step %d: %s(%v) -> %s\n", step, call.Name, call.Arguments, out)
		history = append(history, out)
	}
}

// resultText renders a tool result for the model: structured content when
// present, else the text blocks.
func resultText(res *protocol.CallToolResult) string {
	if len(res.StructuredContent) > 0 {
		return string(res.StructuredContent)
	}
	return res.Text()
}
