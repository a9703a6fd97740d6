// Package servers holds foreign MCP servers used by the interop tests and
// benchmarks, each a main package in a subdirectory:
//
//   - goserver: the official Go SDK (github.com/modelcontextprotocol/go-sdk)
//   - mcpgoserver: github.com/mark3labs/mcp-go
//   - rawserver: a hand-written stdio JSON-RPC server with no SDK (benchmark floor)
//   - ts/server.mjs: the TypeScript SDK v2 server (@modelcontextprotocol/server)
//
// Every server exposes the same feature set so that one test drives all of
// them: the tools echo {text}, add {a,b}, slow-with-progress {steps},
// ask-name (form elicitation of {name}), sample (sampling), big {size}
// (a text result of size bytes) and -tools N filler tools named
// filler-0000…; the prompt greet {name}; the resource test://static.
//
// HTTP servers bind the address given by -addr (127.0.0.1:0 by default) and
// print their endpoint URL as the first line on stdout.
package servers
