// The conduit command is a Model Context Protocol client for the terminal,
// built on Conduit's public API. Run without arguments it starts Conduit's
// embedded dual-era test server, negotiates with it and shows what it
// found and one tool call:
//
//	go run ./cmd/conduit
//
// Pointed at a server it probes the protocol era, lists features, calls
// tools (with live progress, interactive elicitation and optional
// sampling through a helper program), reads resources, renders prompts,
// asks for completions and listens for change notifications:
//
//	conduit probe https://example.com/mcp
//	conduit tools ws://127.0.0.1:8080/mcp
//	conduit call add a=2 b=3 -- ./my-server --stdio
//	conduit call --repeat 100 --concurrency 8 https://example.com/mcp echo text=hi
//
// A target is an http:// or https:// URL (Streamable HTTP, falling back to
// the deprecated HTTP+SSE transport as the specification says), a ws:// or
// wss:// URL (WebSocket), or a command after "--" (stdio). Without a
// target conduit serves its embedded test server over HTTP on 127.0.0.1.
//
// conduit serve runs the same test server (package conduittest) for hosts
// to be tested against, on stdio or HTTP, in either era and with faults
// on demand; --record FILE on any command writes the session's transcript,
// which conduit serve --replay FILE plays back:
//
//	conduit probe -- conduit serve --era legacy
//	conduit serve --http --fault http-status:status=503
//
// What a server sends is printed with the characters a terminal would act
// on (escape sequences, carriage returns, C1 controls, bidi overrides)
// shown as escapes such as \x1b and \u202e, in text and in --json output
// alike (where they are JSON escapes of the same characters).
//
// Exit status: 0 success, 1 error, 2 usage error, 3 negotiation (or
// connection) failure, 4 the tool returned isError, 130 interrupted.
// "conduit help" and "conduit COMMAND -h" describe every command, its
// flags and its --json output.
package main
