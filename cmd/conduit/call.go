package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"io"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

var callCommand = &command{
	name:    "call",
	args:    "[TARGET] TOOL [JSON-ARGS | key=value | key:=JSON ...]",
	summary: "call a tool (progress bar, interactive elicitation, --repeat for load)",
	detail: `Calls TOOL once and prints its content blocks readably (text as is, images and
audio as type and size, resources with their URI) and its structuredContent as
indented JSON.

Arguments are one JSON object, or key=value pairs typed by the tool's input
schema (numbers, integers and booleans are converted; object and array values
are parsed as JSON; everything else is a string), or key:=JSON for a raw JSON
value.

Progress notifications are drawn as a live bar on stderr when it is a terminal,
as "progress: …" lines otherwise. When the server asks the user for input
(elicitation), the form is asked on stderr and answered on stdin; URL requests
show the URL and wait for Enter. Sampling requests (the server asking for an
LLM completion) are refused unless --sampling-command names a program that
reads the CreateMessageParams JSON on stdin and prints a CreateMessageResult
JSON on stdout.

With --repeat N the tool is called N times on one connection (one at a time, or
--concurrency at once) and a summary is printed: calls ok and failed, p50 and
p99 latency. The client heals itself meanwhile: a call after a lost session or
a restarted server still succeeds. A call lost with its connection is re-sent
only when that cannot run the tool twice (--replay safe, the default: the
server never got it, or the tool is annotated read-only or idempotent);
--replay all re-sends every lost call, --replay none none.`,
	examples: `conduit call add a=2 b=3
conduit call echo '{"text": "hello"}'
conduit call slow steps=5 delayMs=200                # watch the progress bar
conduit call ask_user                                 # answer the form in the terminal
conduit call sample --sampling-command ./my-llm.sh
conduit call https://example.com/mcp search query=mcp limit:=10 --json
conduit call --repeat 100 --concurrency 8 echo text=hi -- ./my-server`,
	output: `a single call prints the CallToolResult as the server sent it:
{"content": [ …content blocks… ], "structuredContent": {…}, "isError": true|absent, …}
(exit status 4 when isError is true)

with --repeat:
{"calls_ok": 10, "calls_failed": 0, "concurrency": 1, "era": "modern",
 "protocolVersion": "2026-07-28", "p50_ms": 1.2, "p99_ms": 3.4,
 "error": {"kind": …, "message": …} | null    (the last failure)}`,
	fixed: -1,
	setup: func(inv *invocation, fs *flag.FlagSet) {
		fs.IntVar(&inv.repeat, "repeat", 0, "call the tool `N` times on one connection and print a summary")
		fs.IntVar(&inv.concurrency, "concurrency", 1, "with --repeat, run `C` calls at once")
		fs.StringVar(&inv.replay, "replay", "safe", "re-send a call lost with its connection: `POLICY` safe, all or none")
		samplingFlag(inv, fs)
	},
	run: runCall,
}

// samplingFlag registers --sampling-command.
func samplingFlag(inv *invocation, fs *flag.FlagSet) {
	fs.StringVar(&inv.samplingCmd, "sampling-command", "", "answer sampling requests by running `CMD` (CreateMessageParams JSON on stdin, CreateMessageResult JSON on stdout)")
}

// handler returns the value that serves the server's requests: the
// terminal prompter for elicitation, plus the sampling command when one
// is configured. Without it sampling is not advertised, so servers that
// need it say so and conduit explains.
func (inv *invocation) handler(pv *progressView) any {
	pr := &prompter{in: newLineReader(inv.std.in), out: inv.std.err, progress: pv, echo: !inv.std.inTTY}
	if inv.samplingCmd == "" {
		return pr
	}
	return &samplingPrompter{prompter: pr, samplingCommand: &samplingCommand{cmd: inv.samplingCmd, stderr: inv.std.err, notify: inv.std.err}}
}

// samplingPrompter answers elicitation in the terminal and sampling with
// a command.
type samplingPrompter struct {
	*prompter
	*samplingCommand
}

func runCall(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 && inv.target.kind == targetCommand {
		// conduit call -- server args tool a=1: the tool went to the server.
		return usagef(`name the tool to call before "--" (everything after "--" is the server's command line): conduit call TOOL [key=value ...] -- COMMAND [ARGS ...]`)
	}
	if len(inv.args) == 0 {
		return usagef("name the tool to call: conduit call [TARGET] TOOL [key=value ...]")
	}
	if inv.repeat < 0 || inv.repeat == 0 && inv.concurrency != 1 && inv.concurrency != 0 {
		return usagef("--concurrency needs --repeat N")
	}
	if inv.concurrency < 1 {
		return usagef("--concurrency must be at least 1")
	}
	replay, ok := map[string]client.ReplayPolicy{"safe": client.ReplaySafe, "all": client.ReplayAll, "none": client.ReplayNone}[inv.replay]
	if !ok {
		return usagef("--replay must be safe, all or none")
	}
	tool, argv := inv.args[0], inv.args[1:]
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	pv := newProgressView(inv.std.err, inv.std.errTTY, inv.std.errCols)
	c, err := inv.dial(ctx, inv.handler(pv))
	defer c.close()
	if err != nil {
		return err
	}
	args, err := toolArgs(ctx, c, tool, argv)
	if err != nil {
		return err
	}
	if inv.repeat > 0 {
		return runRepeat(ctx, inv, c, tool, args, client.WithReplay(replay))
	}
	res, err := c.CallTool(ctx, tool, args, client.WithProgress(pv.update), client.WithReplay(replay))
	pv.finish()
	return inv.reportCall(tool, res, err)
}

// toolArgs builds the call's arguments, reading the tool's input schema
// when key=value arguments need typing.
func toolArgs(ctx context.Context, c *conn, tool string, argv []string) (any, error) {
	var schema objectSchema
	if needsSchema(argv) {
		found := false
		for t, err := range c.Tools(ctx) {
			if err != nil {
				return nil, fmt.Errorf("listing tools to type the arguments: %w", err)
			}
			if t.Name == tool {
				schema, found = parseObjectSchema(t.InputSchema), true
				break
			}
		}
		if !found {
			return nil, fmt.Errorf("the server has no tool %q (see 'conduit tools')", tool)
		}
	}
	raw, err := parseToolArgs(argv, schema)
	if err != nil || raw == nil {
		// A nil json.RawMessage in an interface is not "no arguments" to
		// the client: pass a nil interface instead.
		return nil, err
	}
	return raw, nil
}

// writeCallResult prints a tool result readably.
func writeCallResult(w io.Writer, res *protocol.CallToolResult) {
	writeContent(w, res.Content)
	if len(res.StructuredContent) > 0 && string(res.StructuredContent) != "null" {
		fmt.Fprintln(w, "structuredContent:")
		fmt.Fprintln(w, indentJSON(res.StructuredContent))
	}
}

// firstText returns the first text block, on one line and shortened.
func firstText(blocks []protocol.Content) string {
	for _, b := range blocks {
		if b.Type == protocol.ContentText {
			return textcut.Cut(oneLine(b.Text), 200)
		}
	}
	return ""
}

// isToolFailure reports whether res has isError set.
func isToolFailure(res *protocol.CallToolResult) bool {
	return res != nil && res.IsError != nil && *res.IsError
}
