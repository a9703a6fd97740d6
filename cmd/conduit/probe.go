package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

var probeCommand = &command{
	name:    "probe",
	args:    "[TARGET]",
	summary: "negotiate and show the trace, era, version, server info and capabilities",
	detail: `Connects, negotiates the protocol era and prints the negotiation step by step
(what was sent, what came back, the verdict), then the era, the protocol
version, the server's self-description, its instructions and its capabilities.`,
	examples: `conduit probe                                  # the embedded server
conduit probe --protocol legacy https://example.com/mcp
conduit probe --json -- ./my-server | jq .era`,
	output: `{
  "target": "http://127.0.0.1:PORT/mcp",
  "era": "modern" | "legacy",
  "protocolVersion": "2026-07-28",
  "transport": "http" | "sse" | "websocket" | "stdio",
  "serverInfo": {"name": …, "version": …, …} | null,
  "instructions": "…",
  "capabilities": {…server capabilities as sent…},
  "trace": [{"step": "probe", "sent": "server/discover 2026-07-28",
             "outcome": "result", "verdict": "modern", "error": ""}, …],
  "error": {"kind": …, "message": …}          (only on failure; exit status 3)
}`,
	fixed: 0,
	run:   runProbe,
}

// traceJSON is one negotiation step in --json output.
type traceJSON struct {
	Step    string `json:"step"`
	Sent    string `json:"sent"`
	Outcome string `json:"outcome"`
	Verdict string `json:"verdict"`
	Error   string `json:"error,omitempty"`
}

func traceSteps(steps []traceStep) []traceJSON {
	out := make([]traceJSON, len(steps))
	for i, s := range steps {
		out[i] = traceJSON{Step: s.Step, Sent: s.Sent, Outcome: s.Outcome, Verdict: s.Verdict, Error: s.Err}
	}
	return out
}

// probeJSON is probe's --json output.
type probeJSON struct {
	Target          string                       `json:"target"`
	Era             string                       `json:"era,omitempty"`
	ProtocolVersion string                       `json:"protocolVersion,omitempty"`
	Transport       string                       `json:"transport,omitempty"`
	ServerInfo      *protocol.Implementation     `json:"serverInfo"`
	Instructions    string                       `json:"instructions,omitempty"`
	Capabilities    *protocol.ServerCapabilities `json:"capabilities,omitempty"`
	Trace           []traceJSON                  `json:"trace"`
	Error           map[string]any               `json:"error,omitempty"`
}

func runProbe(ctx context.Context, inv *invocation) error {
	if len(inv.args) > 0 {
		return usagef("unexpected argument %q", inv.args[0])
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(ctx, nil)
	defer c.close()
	targetName := inv.target.String()
	if c.embedded != nil {
		targetName = c.embedded.url
	}
	w := inv.std.out
	if err != nil {
		trace := failedTrace(err)
		if inv.json {
			inv.jsonErrorWritten = true
			writeJSON(w, probeJSON{Target: targetName, Trace: traceSteps(trace), Error: errorJSON(ctx, err)})
			return err
		}
		if len(trace) > 0 {
			fmt.Fprintf(w, "Negotiation with %s:\n", targetName)
			writeTrace(w, trace)
		}
		return err
	}
	caps := c.ServerCapabilities()
	if inv.json {
		return writeJSON(w, probeJSON{
			Target:          targetName,
			Era:             c.Negotiated().Era.String(),
			ProtocolVersion: c.Negotiated().Version,
			Transport:       c.Negotiated().Transport,
			ServerInfo:      c.ServerInfo(),
			Instructions:    c.Instructions(),
			Capabilities:    &caps,
			Trace:           traceSteps(c.Negotiated().Trace),
		})
	}
	fmt.Fprintf(w, "Negotiation with %s:\n", targetName)
	writeTrace(w, c.Negotiated().Trace)
	fmt.Fprintln(w)
	writeServerSummary(w, c)
	return nil
}

// writeTrace prints the negotiation steps, numbered.
func writeTrace(w io.Writer, steps []traceStep) {
	t := newTable(w)
	t.prefix = "  "
	for i, s := range steps {
		outcome := s.Outcome
		if s.Err != "" && !strings.Contains(outcome, s.Err) {
			outcome += ": " + s.Err
		}
		verdict := s.Verdict
		if verdict == "" {
			verdict = "-"
		}
		t.row(fmt.Sprintf("%d. %s", i+1, s.Step), "sent "+s.Sent, "→ "+outcome, "⇒ "+verdict)
	}
	t.flush()
}

// writeServerSummary prints era, version, server info, instructions and
// capabilities.
func writeServerSummary(w io.Writer, c *conn) {
	t := newTable(w)
	t.row("Era:", c.Negotiated().Era.String())
	t.row("Protocol version:", c.Negotiated().Version)
	t.row("Transport:", c.Negotiated().Transport)
	t.row("Server:", describeServer(c.ServerInfo()))
	t.row("Capabilities:", strings.Join(capabilityList(c.ServerCapabilities()), ", "))
	t.flush()
	if ins := strings.TrimSpace(c.Instructions()); ins != "" {
		fmt.Fprintln(w, "Instructions:")
		fmt.Fprintln(w, indent(ins, "  "))
	}
}

func describeServer(info *protocol.Implementation) string {
	if info == nil {
		return "(the server did not describe itself)"
	}
	s := info.Name
	if info.Version != "" {
		s += " " + info.Version
	}
	if info.Title != "" && info.Title != info.Name {
		s += " — " + info.Title
	}
	return s
}

// capabilityList describes server capabilities, e.g.
// "tools (listChanged)", "resources (subscribe, listChanged)".
func capabilityList(caps protocol.ServerCapabilities) []string {
	var out []string
	flags := func(name string, pairs ...any) {
		var on []string
		for i := 0; i+1 < len(pairs); i += 2 {
			if pairs[i+1].(bool) {
				on = append(on, pairs[i].(string))
			}
		}
		if len(on) > 0 {
			name += " (" + strings.Join(on, ", ") + ")"
		}
		out = append(out, name)
	}
	if caps.Tools != nil {
		flags("tools", "listChanged", caps.Tools.ListChanged)
	}
	if caps.Prompts != nil {
		flags("prompts", "listChanged", caps.Prompts.ListChanged)
	}
	if caps.Resources != nil {
		flags("resources", "subscribe", caps.Resources.Subscribe, "listChanged", caps.Resources.ListChanged)
	}
	if caps.Completions != nil {
		out = append(out, "completions")
	}
	if caps.Logging != nil {
		out = append(out, "logging")
	}
	if len(caps.Tasks) > 0 && string(caps.Tasks) != "null" {
		out = append(out, "tasks")
	}
	for _, k := range sortedKeys(caps.Extensions) {
		out = append(out, "extension "+k)
	}
	for _, k := range sortedKeys(caps.Experimental) {
		out = append(out, "experimental "+k)
	}
	if len(out) == 0 {
		out = append(out, "(none)")
	}
	return out
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
