package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/client"
)

// flow runs one scenario against env.URL.
type flow func(ctx context.Context, env scenarioEnv) error

// flowFor maps a scenario name to its flow. Auth scenarios use the basic
// flow: the suite's mock authorization servers are driven by the client's
// auth support, not by the flow.
func flowFor(scenario string) flow {
	switch scenario {
	case "json-schema-ref-no-deref":
		return listToolsOnly
	case "json-schema-2020-12-preservation":
		return schemaPreservation
	case "elicitation-sep1034-client-defaults", "elicitation-defaults":
		return callTools("test_client_elicitation_defaults")
	case "sep-2322-client-request-state":
		return mrtrRequestState
	case "http-standard-headers":
		return exerciseEverything
	case "http-custom-headers":
		return contextToolCalls
	case "http-invalid-tool-headers":
		return callEveryListedTool
	case "sep-2640-client-no-prefetch":
		return skillsFlow(false)
	case "sep-2640-client-verify-digest", "sep-2640-client-verify-size", "sep-2640-client-verify-frontmatter":
		return skillsFlow(true)
	default:
		return basic
	}
}

// toolInfo is what the flows keep of a listed tool.
type toolInfo struct {
	Name        string
	InputSchema json.RawMessage
}

func listTools(ctx context.Context, c *client.Client) ([]toolInfo, error) {
	var tools []toolInfo
	for t, err := range c.Tools(ctx) {
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		tools = append(tools, toolInfo{Name: t.Name, InputSchema: t.InputSchema})
	}
	fmt.Fprintf(os.Stderr, "listed %d tools\n", len(tools))
	return tools, nil
}

func call(ctx context.Context, c *client.Client, name string, args any) error {
	res, err := c.CallTool(ctx, name, args)
	if err != nil {
		return fmt.Errorf("tools/call %s: %w", name, err)
	}
	fmt.Fprintf(os.Stderr, "called %s: %.200s\n", name, res.Text())
	return nil
}

// listed makes a flow that dials env.URL, lists the tools and runs f with
// the client and the tools.
func listed(f func(ctx context.Context, c *client.Client, tools []toolInfo) error) flow {
	return func(ctx context.Context, env scenarioEnv) error {
		c, err := env.dial(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		tools, err := listTools(ctx, c)
		if err != nil {
			return err
		}
		return f(ctx, c, tools)
	}
}

// basic lists the tools and calls the preferred one (test-tool for the
// auth scenarios, else the first) with {a:2,b:3}.
var basic = listed(func(ctx context.Context, c *client.Client, tools []toolInfo) error {
	if len(tools) == 0 {
		return nil
	}
	name := tools[0].Name
	for _, t := range tools {
		if t.Name == "test-tool" {
			name = t.Name
		}
	}
	return call(ctx, c, name, map[string]any{"a": 2, "b": 3})
})

// listToolsOnly lists tools and stops (the scenario serves nothing else).
var listToolsOnly = listed(func(context.Context, *client.Client, []toolInfo) error { return nil })

// schemaPreservation echoes the focal tool's inputSchema, as observed,
// through json_schema_echo.
var schemaPreservation = listed(func(ctx context.Context, c *client.Client, tools []toolInfo) error {
	for _, t := range tools {
		if t.Name == "json_schema_2020_12_tool" {
			return call(ctx, c, "json_schema_echo", map[string]any{"schema": t.InputSchema})
		}
	}
	return errors.New("focal tool json_schema_2020_12_tool not listed")
})

// callTools lists the tools and calls each of names, in order, with no
// arguments.
func callTools(names ...string) flow {
	return listed(func(ctx context.Context, c *client.Client, _ []toolInfo) error {
		for _, name := range names {
			if err := call(ctx, c, name, map[string]any{}); err != nil {
				return err
			}
		}
		return nil
	})
}

// mrtrRequestState drives the SEP-2322 tools; the client runs the
// input_required rounds itself.
var mrtrRequestState = callTools("test_mrtr_echo_state", "test_mrtr_unrelated", "test_mrtr_no_state", "test_mrtr_no_result_type")

// exerciseEverything sends every request kind that carries standard
// headers: tools/list, tools/call, resources/list, resources/read,
// prompts/list, prompts/get.
var exerciseEverything = listed(func(ctx context.Context, c *client.Client, tools []toolInfo) error {
	if len(tools) > 0 {
		if err := call(ctx, c, tools[0].Name, synthesizeArgs(tools[0].InputSchema)); err != nil {
			return err
		}
	}
	var uri string
	for r, err := range c.Resources(ctx) {
		if err != nil {
			return fmt.Errorf("resources/list: %w", err)
		}
		if uri == "" {
			uri = r.URI
		}
	}
	if uri != "" {
		if _, err := c.ReadResource(ctx, uri); err != nil {
			return fmt.Errorf("resources/read %s: %w", uri, err)
		}
	}
	var prompt string
	var promptArgs map[string]string
	for p, err := range c.Prompts(ctx) {
		if err != nil {
			return fmt.Errorf("prompts/list: %w", err)
		}
		if prompt == "" {
			prompt = p.Name
			promptArgs = map[string]string{}
			for _, a := range p.Arguments {
				promptArgs[a.Name] = "value"
			}
		}
	}
	if prompt != "" {
		if _, err := c.GetPrompt(ctx, prompt, promptArgs); err != nil {
			return fmt.Errorf("prompts/get %s: %w", prompt, err)
		}
	}
	return nil
})

// contextToolCalls lists the tools (the client learns the x-mcp-header
// annotations from them) and makes the calls the scenario's context names.
func contextToolCalls(ctx context.Context, env scenarioEnv) error {
	var calls []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if raw, ok := env.Context["toolCalls"]; ok {
		if err := json.Unmarshal(raw, &calls); err != nil {
			return fmt.Errorf("context toolCalls: %w", err)
		}
	}
	return listed(func(ctx context.Context, c *client.Client, _ []toolInfo) error {
		for _, tc := range calls {
			if err := call(ctx, c, tc.Name, tc.Arguments); err != nil {
				return err
			}
		}
		return nil
	})(ctx, env)
}

// callEveryListedTool calls each tool the client kept from tools/list
// (the client drops tools with invalid x-mcp-header annotations).
var callEveryListedTool = listed(func(ctx context.Context, c *client.Client, tools []toolInfo) error {
	for _, t := range tools {
		if err := call(ctx, c, t.Name, synthesizeArgs(t.InputSchema)); err != nil {
			return err
		}
	}
	return nil
})

// synthesizeArgs builds arguments for an object schema's required
// properties from their types.
func synthesizeArgs(schema json.RawMessage) map[string]any {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	args := map[string]any{}
	if json.Unmarshal(schema, &s) != nil {
		return args
	}
	req := append([]string(nil), s.Required...)
	sort.Strings(req)
	for _, name := range req {
		typ, _ := s.Properties[name].Type.(string)
		switch strings.ToLower(typ) {
		case "number", "integer":
			args[name] = 1
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			args[name] = "us-east1"
		}
	}
	return args
}
