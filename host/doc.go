// Package host runs many MCP servers from one configuration file, as agent
// hosts do: it reads the file, connects every server concurrently, merges
// their tools, prompts and resources into one catalogue under
// collision-safe names, routes calls by those names and keeps everything
// current while servers come and go.
//
//	cfg, err := host.Load(".mcp.json", nil)
//	h, err := host.Start(cfg, nil)
//	defer h.Close()
//	h.Wait(ctx)                                  // every server ready or failed
//	for _, t := range h.Tools() { … t.Name … }   // "github__create_issue"
//	res, err := h.CallTool(ctx, "github__create_issue", args)
//	decls := h.FunctionDeclarations()            // for an LLM function-calling API
//
// # Configuration files
//
// [Load] and [Parse] read three formats into one [Config]:
//
//   - the "mcpServers" object of Claude Desktop and Cursor: for each server
//     command, args and env (and cwd, which several hosts accept), or url,
//     headers and an optional type;
//   - Claude Code's .mcp.json: the same, with type "stdio", "http" or "sse"
//     and ${VAR} and ${VAR:-default} references to environment variables
//     in command, args, env, url and headers;
//   - VS Code's .vscode/mcp.json: a "servers" object (type, command, args,
//     env, envFile, or url and headers) and "inputs", values to prompt
//     for, referenced as ${input:ID} and resolved through
//     [LoadOptions.Input] (also under "mcp" in VS Code's settings.json).
//
// Comments and trailing commas, which VS Code allows, are accepted in
// every format.
//
// References are expanded in every format (${VAR}, ${VAR:-default},
// ${env:VAR}, ${input:ID}, ${workspaceFolder}, ${userHome}); a reference
// that cannot be resolved is an error, never an empty string
// ([LoadOptions.NoExpand] turns expansion off).
//
// # Servers
//
// Each server has its own options ([Options.Server]: protocol mode,
// handler, headers, authorization, timeouts, environment) and its own
// supervisor goroutine. A server that fails to start, does not answer
// within its ConnectTimeout or dies later affects no other: its state and
// last error are in [Host.Servers], its entries leave the catalogue, and
// it is reconnected with exponential backoff ([Options.Reconnect]); its
// entries return when it does. The catalogue is refreshed when a server
// reports a list change (tools, prompts or resources list_changed) and
// when its session reconnects.
//
// # Names
//
// A catalogue name is server + "__" + name by default ([Options.Name]),
// sanitized to what LLM function-calling APIs accept (see [Sanitize]) and
// made unique with a suffix derived from the server and the entry.
//
// # Concurrency
//
// A Host is safe for concurrent use. [Host.Changed] wakes waiters at every
// change of the catalogue or of a server's state. [Host.Close] stops every
// server concurrently and joins every goroutine the host started, bounded
// by [CloseTimeout].
//
// # Cancellation
//
// Calls take a context that bounds them; connection attempts are bounded
// by each server's ConnectTimeout and ended by Close.
//
// # Errors
//
// Configuration errors are [*ConfigError] values naming the file, the
// server and the field ([ErrUnsetVariable], [ErrUnresolvedInput]).
// A call to an unknown name wraps [ErrNotFound]; to a server that is not
// connected it is a [*ServerError] matching [ErrNotReady]; after Close,
// [ErrClosed]. Otherwise calls return the client package's errors.
package host
