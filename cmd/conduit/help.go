package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

const targetHelp = `Targets:
  http://… https://…   Streamable HTTP (both eras; falls back to HTTP+SSE for old servers)
  ws://… wss://…       WebSocket
  -- COMMAND ARGS…     a server started as a subprocess, speaking stdio (it is stopped on exit)
  (none)               the embedded dual-era test server, served on http://127.0.0.1:PORT/mcp
`

const exitHelp = `Exit status:
  0    success
  1    error (the request failed: server error, transport failure, timeout…)
  2    usage error (bad flags or arguments)
  3    negotiation or connection failure (no era agreed, server unreachable, auth required…)
  4    the tool ran and returned isError: true (call)
  130  interrupted (Ctrl-C cancels the running request and stops a stdio server)
`

const jsonErrorHelp = `With --json, a failure prints {"error": {"kind": K, "message": M, …}} on stdout
(probe and call --repeat put "error" in their usual object) besides the one-line
message on stderr. Kinds: usage, interrupted, tool-error, then those of the client
library: canceled, timeout, closed, invalid, handler, process, network, http, auth,
negotiation, unsupported, protocol, server, error. "code" (JSON-RPC) and "status" (HTTP)
are added when known.
`

func printMainHelp(w io.Writer) {
	fmt.Fprint(w, `conduit — a Model Context Protocol client for the terminal (both protocol eras).

Usage:
  conduit [flags] [TARGET]                  the tour: negotiate, list, call one tool
  conduit COMMAND [flags] [TARGET] ARGS…    see below
  conduit COMMAND [flags] ARGS… -- SERVER-COMMAND ARGS…

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	for _, c := range commands {
		name := c.name
		if c == demoCommand {
			name = "tour"
		}
		fmt.Fprintf(tw, "  %s\t%s\n", name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, "\n"+targetHelp+"\n"+configHelp+"\n")
	fmt.Fprint(w, "Global flags (every command; anywhere before --):\n")
	fs := flag.NewFlagSet("conduit", flag.ContinueOnError)
	(&invocation{}).globalFlags(fs)
	printFlags(w, fs)
	fmt.Fprint(w, "\n"+exitHelp+"\n"+jsonErrorHelp+`
Examples:
  go run ./cmd/conduit                                   # the tour against the embedded server
  conduit probe --protocol legacy                        # the embedded server, legacy era
  conduit tools https://example.com/mcp --header "Authorization: Bearer $TOKEN"
  conduit tools https://example.com/mcp --auth device --token-file ~/.conduit-tokens.json
  conduit call add a=2 b=3 -- npx -y some-mcp-server
  conduit call --repeat 50 --concurrency 4 ws://127.0.0.1:8080/mcp echo text=hi

Run 'conduit COMMAND -h' for the flags, examples and JSON output of a command.
`)
}

func printCommandHelp(w io.Writer, c *command) {
	name := "conduit " + c.name
	if c == demoCommand {
		name = "conduit"
	}
	fmt.Fprintf(w, "Usage: %s [flags] %s\n\n%s\n", name, c.args, strings.TrimSpace(c.detail))
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	inv := &invocation{}
	if c.setup != nil {
		c.setup(inv, fs)
		fmt.Fprint(w, "\nFlags:\n")
		printFlags(w, fs)
	}
	if c.name != "help" && c.main == nil {
		fmt.Fprint(w, "\nGlobal flags:\n")
		gs := flag.NewFlagSet(name, flag.ContinueOnError)
		inv.globalFlags(gs)
		printFlags(w, gs)
		fmt.Fprint(w, "\n"+targetHelp)
	}
	if c.output != "" {
		fmt.Fprintf(w, "\nJSON output (--json):\n%s\n\n%s", indent(strings.TrimSpace(c.output), "  "), indent(jsonErrorHelp, "  "))
	}
	if c.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s\n", indent(strings.TrimSpace(c.examples), "  "))
	}
	if c.name != "help" && c.main == nil {
		fmt.Fprint(w, "\n"+exitHelp)
	}
}

// printFlags prints fs's flags with double dashes, the way they are
// usually written, wrapping the descriptions.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if name != "" {
			line += " " + name
		}
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "false" && f.DefValue != "0s" && f.DefValue != "[]" {
			usage += fmt.Sprintf(" (default %s)", f.DefValue)
		}
		const col = 28
		if len(line) >= col {
			fmt.Fprintln(w, line)
			line = ""
		}
		for i, l := range wrap(usage, 80-col-1) {
			if i > 0 {
				line = ""
			}
			fmt.Fprintf(w, "%-*s %s\n", col, line, l)
		}
	})
}

// wrap splits s into lines of at most width characters (longer words
// stay whole).
func wrap(s string, width int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		if cur != "" && len(cur)+1+len(word) > width {
			lines = append(lines, cur)
			cur = ""
		}
		if cur != "" {
			cur += " "
		}
		cur += word
	}
	return append(lines, cur)
}

func indent(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + strings.TrimLeft(l, "\t")
		}
	}
	return strings.Join(lines, "\n")
}
