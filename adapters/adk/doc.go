// Package adkconduit gives MCP tools to agents of Google's Agent
// Development Kit for Go (google.golang.org/adk) as a tool.Toolset, and
// answers MCP sampling with an ADK model.
//
// It is a module of its own, so that Conduit's core does not depend on
// ADK. The schemas, names and results come from package
// github.com/conduitmcp/conduit/toolset; the servers from an mcpServers
// file through package host (or one client).
//
//	cfg, _ := host.Load("mcp.json", nil)
//	h, _ := host.Start(cfg, nil)
//	defer h.Close()
//	_ = h.Wait(ctx)
//	set, _ := toolset.Load(ctx, toolset.FromHost(h), nil)
//	tools, _ := adkconduit.New(set, nil)
//	a, _ := llmagent.New(llmagent.Config{Name: "assistant", Model: m, Toolsets: []tool.Toolset{tools}})
//	// … runner.New(runner.Config{Agent: a, …}) and Run as any ADK agent …
//
// # Tools and results
//
// [New] declares the set's tools as function declarations with
// parametersJsonSchema (see toolset.GeminiJSONSchema), or with parameters
// in genai's Schema type when [Options].SchemaType is set (see
// toolset.Gemini); a declaration never carries a null schema. Each tool
// has the methods ADK's flow calls on its own function tools
// (Declaration, ProcessRequest, Run), so the agent's model sees them and
// the flow runs them. A call answers {"output": …}: the structured
// content when the tool gave some, else its text (images and other
// content described in it, bounded as toolset.Options say). A tool error
// (isError) or a call that failed is a [*ToolError]; ADK gives the model
// {"error": …} with the tool's words and the run goes on (ADK itself
// answers a name it does not know). When the run's context ends during a call, Run returns the
// context's error and the run stops.
//
// # Sampling
//
// [Sampler] is a handler.Sampler backed by any model.LLM: a server's
// sampling (legacy sampling/createMessage, modern input requests) is
// answered by the agent's model with its own credentials.
//
// # Concurrency
//
// A [Toolset] is immutable and safe for concurrent use; ADK runs the
// function calls of one model turn in parallel.
package adkconduit
