// The agent command runs Eino's ReAct agent over the MCP servers of an
// mcpServers file: the servers' tools are Eino tools, the agent's model
// calls them and reads their results, until it answers.
//
// Usage:
//
//	agent [-config mcp.json] [prompt]
//
// The chat model here is a scripted one, which calls the first tool named
// like "echo" with the prompt, then answers with what the tool said, so
// that the loop runs without a key. To ask a real model, build any Eino
// chat model (the OpenAI, Claude, Gemini, Ark or Ollama ones of eino-ext)
// and give it as ToolCallingModel: nothing else changes. Without -config
// it serves Conduit's test server.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"time"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	einoconduit "github.com/conduitmcp/conduit/adapters/eino"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func main() {
	config := flag.String("config", "", "mcpServers file (default: Conduit's test server)")
	flag.Parse()
	prompt := strings.Join(flag.Args(), " ")
	if prompt == "" {
		prompt = "hello from MCP"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, *config, prompt, &scriptedModel{}, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, config, prompt string, chat model.ToolCallingChatModel, out io.Writer) error {
	h, stop, err := toolsettest.DemoHost(ctx, config)
	if err != nil {
		return err
	}
	defer stop()
	set, err := toolset.Load(ctx, toolset.FromHost(h), nil)
	if err != nil {
		return err
	}
	tools, err := einoconduit.Tools(set, nil)
	if err != nil {
		return err
	}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: chat, ToolsConfig: compose.ToolsNodeConfig{Tools: tools}})
	if err != nil {
		return err
	}
	answer, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage(prompt)})
	if err != nil {
		return err
	}
	fmt.Fprintln(out, answer.Content)
	return nil
}

// scriptedModel answers as a model would: a call of the echo tool with
// the user's words first, then an answer with the tool's result.
type scriptedModel struct{ tools []*schema.ToolInfo }

func (m *scriptedModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return &scriptedModel{tools: tools}, nil
}

func (m *scriptedModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	last := input[len(input)-1]
	if last.Role == schema.Tool {
		return schema.AssistantMessage("The tool said: "+last.Content, nil), nil
	}
	for _, t := range m.tools {
		if strings.HasSuffix(t.Name, "echo") {
			args, err := json.Marshal(map[string]string{"text": last.Content})
			if err != nil {
				return nil, err
			}
			return schema.AssistantMessage("", []schema.ToolCall{{ID: "call_1", Type: "function",
				Function: schema.FunctionCall{Name: t.Name, Arguments: string(args)}}}), nil
		}
	}
	return schema.AssistantMessage("No echo tool here.", nil), nil
}

func (m *scriptedModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return nil, errors.New("scripted model: no streaming")
}
