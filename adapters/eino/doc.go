// Package einoconduit gives MCP tools to agents built with CloudWeGo's
// Eino (github.com/cloudwego/eino): each tool of a toolset.Set is an Eino
// tool that the ToolsNode, and so the ReAct agent of flow/agent/react,
// calls like any other; and any Eino chat model answers a server's MCP
// sampling requests.
//
// It is a module of its own, so that Conduit's core does not depend on
// Eino; its package name is not "eino", so that it does not shadow the
// framework's. The schemas, names and results come from package
// github.com/conduitmcp/conduit/toolset.
//
//	h, _ := host.Start(cfg, nil)                          // an mcpServers file
//	set, _ := toolset.Load(ctx, toolset.FromHost(h), nil)
//	tools, _ := einoconduit.Tools(set, nil)
//	agent, _ := react.NewAgent(ctx, &react.AgentConfig{
//		ToolCallingModel: chatModel,
//		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools},
//	})
//	answer, _ := agent.Generate(ctx, []*schema.Message{schema.UserMessage("…")})
//
// # Tools
//
// [Tools] gives [tool.InvokableTool]s, whose results are text (images
// become short notes); [EnhancedTools] gives [tool.EnhancedInvokableTool]s,
// whose results keep images as image parts, for the multimodal models.
// Their parameters are the tool's input schema in the dialect of
// [Options.Dialect] (toolset.OpenAI unless set), as a JSON Schema
// (schema.NewParamsOneOfByJSONSchema): choose the dialect of the model
// behind the agent.
//
// # Results and errors
//
// A tool that fails, reports an error (isError), or is called with
// arguments that are not a JSON object does not fail the agent: the model
// reads why, and may try again. Only the end of the run's context ends
// a tool call with an error, which ends the agent's run.
//
// # Sampling
//
// [Sampler] is a handler.Sampler backed by any Eino chat model (an
// OpenAI, Claude, Gemini, Ark or Ollama model of eino-ext, or your own):
// sampling/createMessage in the legacy era and the sampling input
// requests of the modern era both reach it.
//
// # Concurrency
//
// The tools and the Sampler are safe for concurrent use.
package einoconduit
