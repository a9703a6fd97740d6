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
// when its session reconnects, at most ten times a second per server
// (changes reported meanwhile are listed together); a reconnection the client made on its own
// (a crashed stdio process started again) is counted in
// [ServerStatus].Heals.
//
// # Starting many servers
//
// Stdio servers start a few at a time ([Options.MaxStarting]; by default
// twice the number of CPUs, at least 4), in the order they asked (the
// first starts in the order of the servers' names), so that
// a hundred servers that each need a second of CPU to start come up one
// batch after another instead of all failing their deadline together. A
// server waits for a start slot in [StateQueued]; its ConnectTimeout
// counts from when it has one. A reconnection, and the client's own
// restart of a crashed process, take a slot too (a restart during the
// server's first listing, the slot its attempt holds, never waiting for
// it), and reconnections back off with jitter, so failing servers never start as a herd. [Host.Changed]
// fires as each server comes up, so a caller can show progress (as
// conduit tools --config does) or use the servers that are ready without
// waiting for the slowest. interop/bench/RESULTS.md ("Host at scale")
// measures 100 and 200 slow servers with and without the cap.
//
// # Names
//
// A catalogue name is server + "__" + name by default ([Options.Name]),
// sanitized to what LLM function-calling APIs accept (see [Sanitize]). A
// name that two entries would share (server or entry names that differ
// only where Sanitize makes them alike, such as my.server and my_server),
// counting the entries of servers that are down, is given to neither:
// each gets a suffix derived from its server and its own name. So a name
// that named one server's tool never names another's as servers come up
// and go down: a model that kept it from an earlier turn reaches the tool
// it was given, or is told the server is down or the name is unknown.
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
// server and the field ([ErrUnsetVariable], [ErrUnresolvedInput]); a file
// with several bad servers gives [ConfigErrors], every one of them.
// A call of a tool or prompt whose server is not connected is a
// [*ServerError] matching [ErrNotReady], with the server's error inside:
// for a server that died, the names it listed before; for a server that
// never connected, with the default names, every SERVER__… name. A name
// no server has wraps [ErrNotFound]; after Close, [ErrClosed]. Otherwise
// calls return the client package's errors.
package host
