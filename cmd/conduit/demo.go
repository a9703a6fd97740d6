package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

var demoCommand = &command{
	name:    "tour",
	args:    "[TARGET]",
	summary: "(no command) negotiate, show the server, list its tools and call one",
	detail: `The tour: connects (by default to the embedded dual-era test server, served on
http://127.0.0.1:PORT/mcp for the duration of the run), shows the negotiation
and what the server offers, lists its tools and calls one — add(2, 3) on the
embedded server, otherwise the first tool that says it only reads
(readOnlyHint) and needs no arguments, or none. Runs when conduit is given no
command.`,
	examples: `go run ./cmd/conduit
conduit --protocol legacy                  # the same server, legacy era
conduit https://example.com/mcp
conduit -- ./my-server --stdio`,
	output: `{"probe": {…as conduit probe --json…}, "tools": [ …Tool… ],
 "call": {"tool": "add", "arguments": {…}, "result": {…CallToolResult…}} | null}`,
	fixed: 0,
	setup: samplingFlag,
	run:   runDemo,
}

func runDemo(ctx context.Context, inv *invocation) error {
	if len(inv.args) > 0 {
		return usagef("unexpected argument %q (commands: conduit help)", inv.args[0])
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	pv := newProgressView(inv.std.err, inv.std.errTTY, inv.std.errCols)
	c, err := inv.dial(ctx, inv.handler(pv))
	defer c.close()
	w := inv.std.out
	targetName := inv.target.String()
	if c.embedded != nil {
		targetName = c.embedded.url
		if !inv.json {
			fmt.Fprintf(w, "Conduit's embedded dual-era test server is serving at %s.\n\n", targetName)
		}
	}
	if err != nil {
		if !inv.json {
			if trace := failedTrace(err); len(trace) > 0 {
				fmt.Fprintf(w, "Negotiation with %s:\n", targetName)
				writeTrace(w, trace)
			}
		}
		return err
	}
	tools, err := collect(c.Tools(ctx))
	if err != nil {
		return fmt.Errorf("listing tools: %w", err)
	}
	tool, args := pickDemoTool(tools, c.embedded != nil)

	if !inv.json {
		fmt.Fprintf(w, "Negotiation with %s:\n", targetName)
		writeTrace(w, c.Negotiated().Trace)
		fmt.Fprintln(w)
		writeServerSummary(w, c)
		fmt.Fprintf(w, "\nTools (%d):\n", len(tools))
		writeToolTable(w, tools)
		writeDropped(w, droppedTools(c.DroppedTools()))
	}
	var res *protocol.CallToolResult
	if tool != "" {
		if !inv.json {
			fmt.Fprintf(w, "\nCalling %s %s:\n", tool, args)
		}
		res, err = c.CallTool(ctx, tool, args, client.WithProgress(pv.update))
		pv.finish()
		if err != nil {
			return fmt.Errorf("calling %s: %w", tool, err)
		}
	}
	if inv.json {
		return writeJSON(w, demoJSON(c, targetName, tools, tool, args, res))
	}
	if tool == "" {
		fmt.Fprintln(w, "\nNo tool says it only reads (readOnlyHint) and needs no arguments, so the tour calls none; try: conduit call TARGET TOOL key=value …")
	} else {
		writeCallResult(w, res)
	}
	if c.embedded != nil {
		fmt.Fprint(w, `
Next, try:
  conduit probe --protocol legacy       the same server in the legacy era, step by step
  conduit call slow steps=5 delayMs=300 a progress bar
  conduit call ask_user                 the server asks you a question (elicitation)
  conduit call --repeat 200 --concurrency 8 echo text=hi
  conduit tools https://your-server.example/mcp
  conduit help
`)
	}
	return nil
}

// demoJSON is the --json document of the tour: the probe, the tools and the
// call made (null when none could be).
func demoJSON(c *conn, targetName string, tools []protocol.Tool, tool string, args json.RawMessage, res *protocol.CallToolResult) map[string]any {
	caps := c.ServerCapabilities()
	out := map[string]any{
		"probe": probeJSON{
			Target: targetName, Era: c.Negotiated().Era.String(), ProtocolVersion: c.Negotiated().Version,
			Transport: c.Negotiated().Transport, ServerInfo: c.ServerInfo(), Instructions: c.Instructions(),
			Capabilities: &caps, Trace: traceSteps(c.Negotiated().Trace),
		},
		"tools": tools,
		"call":  nil,
	}
	if tool != "" {
		out["call"] = map[string]any{"tool": tool, "arguments": args, "result": res}
	}
	return out
}

// pickDemoTool chooses the tool the tour calls: add(2, 3) on the embedded
// server; on another, the first tool that says it only reads
// (readOnlyHint, and not destructiveHint) and has no required arguments,
// or none: the tour does not call a tool that may change what the user
// did not ask to change.
func pickDemoTool(tools []protocol.Tool, embedded bool) (string, json.RawMessage) {
	if embedded {
		for _, t := range tools {
			if t.Name == "add" {
				return "add", json.RawMessage(`{"a":2,"b":3}`)
			}
		}
	}
	for _, t := range tools {
		a := t.Annotations
		if a == nil || a.ReadOnlyHint == nil || !*a.ReadOnlyHint || a.DestructiveHint != nil && *a.DestructiveHint {
			continue
		}
		if len(parseObjectSchema(t.InputSchema).required) == 0 {
			return t.Name, json.RawMessage(`{}`)
		}
	}
	return "", nil
}
