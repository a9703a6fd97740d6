// Package matrix holds TestForeignServers: Conduit's client against every
// foreign server (official Go SDK, mcp-go, TypeScript SDK v2,
// server-everything) over stdio and HTTP (and HTTP+SSE where offered), in
// every negotiation mode (Auto, Modern, Legacy, Pin). Each cell asserts the
// negotiated era, or the typed error when the server cannot serve the
// requested era, and in the negotiated era drives tools/list, a call, a
// prompt, a resource read, progress and, where the server offers them, an
// elicitation and a sampling round. It prints the matrix
// (server × transport × mode ⇒ era / result).
package matrix
