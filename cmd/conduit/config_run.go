package main

import (
	"context"
	"fmt"
	"io"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/protocol"
)

// runConfigList lists the tools, prompts, resources or templates of every
// server of the config file. A server that failed is reported (on stderr,
// and under "servers" with --json) and makes the exit status 3.
func runConfigList(ctx context.Context, inv *invocation, what string) error {
	hs, err := inv.startHostNoArgs(ctx)
	if err != nil {
		return err
	}
	defer hs.Close()
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	items, err := inv.listItems(ctx, hs, what)
	if err != nil {
		return err
	}
	if what == "templates" {
		what = "resourceTemplates"
	}
	return inv.finishConfig(ctx, hs, map[string]any{what: items})
}

// listItems prints (unless --json) and returns the entries of one kind.
func (inv *invocation) listItems(ctx context.Context, hs *host.Host, what string) ([]map[string]any, error) {
	items := []map[string]any{}
	w := inv.std.out
	switch what {
	case "tools":
		t := newTable(w, "NAME", "SERVER", "TITLE", "ARGUMENTS", "DESCRIPTION")
		for _, tl := range hs.Tools() {
			items = append(items, jsonItem(tl.Tool, tl.Server, tl.Name))
			t.row(tl.Name, tl.Server, toolTitle(tl.Tool), parseObjectSchema(tl.Tool.InputSchema).summary(), tl.Tool.Description)
		}
		flushUnlessJSON(inv, t)
	case "prompts":
		t := newTable(w, "NAME", "SERVER", "TITLE", "ARGUMENTS", "DESCRIPTION")
		for _, p := range hs.Prompts() {
			items = append(items, jsonItem(p.Prompt, p.Server, p.Name))
			t.row(p.Name, p.Server, p.Prompt.Title, promptArgs(p.Prompt.Arguments), p.Prompt.Description)
		}
		flushUnlessJSON(inv, t)
	case "resources":
		t := newTable(w, "URI", "SERVER", "NAME", "TITLE", "MIME TYPE", "DESCRIPTION")
		for _, r := range hs.Resources() {
			items = append(items, jsonItem(r.Resource, r.Server, ""))
			t.row(r.Resource.URI, r.Server, r.Resource.Name, r.Resource.Title, r.Resource.MIMEType, r.Resource.Description)
		}
		flushUnlessJSON(inv, t)
	case "templates":
		return listTemplates(ctx, inv, hs)
	}
	return items, nil
}

// runConfigTour is the tour of a config file: every server's negotiation
// and summary, then the merged tools.
func runConfigTour(ctx context.Context, inv *invocation) error {
	hs, err := inv.startHostNoArgs(ctx)
	if err != nil {
		return err
	}
	defer hs.Close()
	probes := inv.probeServers(ctx, hs)
	if !inv.json {
		fmt.Fprintln(inv.std.out)
	}
	tools, _ := inv.listItems(ctx, hs, "tools")
	return inv.finishConfig(ctx, hs, map[string]any{"servers": probes, "tools": tools})
}

// startHostNoArgs is startHost without a handler, for commands that take
// no arguments.
func (inv *invocation) startHostNoArgs(ctx context.Context) (*host.Host, error) {
	if len(inv.args) > 0 {
		return nil, usagef("unexpected argument %q", inv.args[0])
	}
	return inv.startHost(ctx, nil)
}

func toolTitle(tool protocol.Tool) string {
	if tool.Title == "" && tool.Annotations != nil {
		return tool.Annotations.Title
	}
	return tool.Title
}

func jsonItem(v any, server, qualified string) map[string]any {
	m := map[string]any{}
	for k, raw := range withServer(v, server, qualified) {
		m[k] = raw
	}
	return m
}

func flushUnlessJSON(inv *invocation, t *table) {
	if !inv.json {
		t.flush()
	}
}

// listTemplates lists the resource templates of every ready server
// (the host's catalogue has none: they are not callable).
func listTemplates(ctx context.Context, inv *invocation, hs *host.Host) ([]map[string]any, error) {
	var items []map[string]any
	t := newTable(inv.std.out, "URI TEMPLATE", "SERVER", "NAME", "TITLE", "MIME TYPE", "DESCRIPTION")
	for _, st := range hs.Servers() {
		c, err := hs.Client(st.Name)
		if err != nil || c.ServerCapabilities().Resources == nil {
			continue
		}
		res, err := collect(c.ResourceTemplates(ctx))
		if err != nil {
			return nil, fmt.Errorf("listing resource templates of %q: %w", st.Name, err)
		}
		for _, r := range res {
			items = append(items, jsonItem(r, st.Name, ""))
			t.row(r.URITemplate, st.Name, r.Name, r.Title, r.MIMEType, r.Description)
		}
	}
	flushUnlessJSON(inv, t)
	return items, nil
}

// finishConfig writes the --json object out (with "servers" added
// unless it has them) and returns the failure of a server, if any.
func (inv *invocation) finishConfig(ctx context.Context, hs *host.Host, out map[string]any) error {
	failed := inv.failedServers(hs)
	if inv.json {
		if _, ok := out["servers"]; !ok {
			out["servers"] = serversJSON(ctx, hs)
		}
		inv.jsonErrorWritten = true
		if err := writeJSON(inv.std.out, out); err != nil {
			return err
		}
	}
	return failed
}

// configProbeJSON is one server in probe --config --json.
type configProbeJSON struct {
	Server string `json:"server"`
	State  string `json:"state"`
	probeJSON
}

// runConfigProbe probes every server of the config file.
func runConfigProbe(ctx context.Context, inv *invocation) error {
	hs, err := inv.startHostNoArgs(ctx)
	if err != nil {
		return err
	}
	defer hs.Close()
	return inv.finishConfig(ctx, hs, map[string]any{"servers": inv.probeServers(ctx, hs)})
}

// probeServers prints (unless --json) and returns every server's
// negotiation and summary.
func (inv *invocation) probeServers(ctx context.Context, hs *host.Host) []configProbeJSON {
	w := inv.std.out
	out := []configProbeJSON{}
	for i, st := range hs.Servers() {
		p := configProbeJSON{Server: st.Name, State: st.State.String()}
		p.Target = serverTarget(inv.configFile, st.Name).String()
		if !inv.json {
			if i > 0 {
				fmt.Fprintln(w)
			}
			fmt.Fprintf(w, "Server %s (%s): %s\n", st.Name, st.Type, st.State)
		}
		c, err := hs.Client(st.Name)
		if err != nil {
			p.Trace = traceSteps(failedTrace(st.Err))
			if st.Err != nil {
				p.Error = errorJSON(ctx, st.Err)
				if !inv.json {
					writeTrace(w, failedTrace(st.Err))
					fmt.Fprintf(w, "error: %s\n", oneLine(describeError(st.Err)))
				}
			}
			out = append(out, p)
			continue
		}
		caps := c.ServerCapabilities()
		p.Era, p.ProtocolVersion, p.Transport = c.Negotiated().Era.String(), c.Negotiated().Version, c.Negotiated().Transport
		p.ServerInfo, p.Instructions, p.Capabilities = c.ServerInfo(), c.Instructions(), &caps
		p.Trace = traceSteps(c.Negotiated().Trace)
		out = append(out, p)
		if !inv.json {
			writeTrace(w, c.Negotiated().Trace)
			writeServerSummary(w, &conn{Client: c})
		}
	}
	return out
}

// runConfigCall calls a tool by its catalogue name (SERVER__TOOL).
func runConfigCall(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 {
		return usagef("name the tool to call (SERVER__TOOL, see 'conduit tools --config %s')", inv.configFile)
	}
	if inv.repeat != 0 || inv.concurrency != 1 {
		return usagef("--repeat and --concurrency need --server NAME")
	}
	name, argv := inv.args[0], inv.args[1:]
	pv := newProgressView(inv.std.err, inv.std.errTTY, inv.std.errCols)
	hs, err := inv.startHost(ctx, inv.handler(pv))
	if err != nil {
		return err
	}
	defer hs.Close()
	tl, ok := hs.Tool(name)
	if !ok {
		return inv.notFound("tool", name, hs)
	}
	args, err := parseToolArgs(argv, parseObjectSchema(tl.Tool.InputSchema))
	if err != nil {
		return err
	}
	var callArgs any
	if args != nil {
		callArgs = args
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	res, err := hs.CallTool(ctx, name, callArgs, client.WithProgress(pv.update))
	pv.finish()
	return inv.reportCall(name, res, err)
}

// reportCall prints the result of one call of tool (or its failure); a
// result with isError is a toolError (exit status 4).
func (inv *invocation) reportCall(tool string, res *protocol.CallToolResult, err error) error {
	if err != nil {
		return fmt.Errorf("calling %s: %w", tool, err)
	}
	if inv.json {
		if err := writeJSON(inv.std.out, res); err != nil {
			return err
		}
	} else {
		writeCallResult(inv.std.out, res)
	}
	if isToolFailure(res) {
		inv.jsonErrorWritten = true
		return &toolError{tool: tool, text: firstText(res.Content)}
	}
	return nil
}

// notFound explains a name that is not in the catalogue, naming a server
// that failed (its tools are missing) if any.
func (inv *invocation) notFound(kind, name string, hs *host.Host) error {
	if err := inv.failedServers(hs); err != nil {
		return fmt.Errorf("no %s %q among the servers that answered; %w", kind, name, err)
	}
	return usagef("no %s %q in %s (see 'conduit %ss --config %s')", kind, name, inv.configFile, kind, inv.configFile)
}

// runConfigPrompt renders a prompt by its catalogue name.
func runConfigPrompt(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 {
		return usagef("name the prompt (SERVER__PROMPT)")
	}
	name := inv.args[0]
	args, err := parseStringArgs(inv.args[1:])
	if err != nil {
		return err
	}
	hs, err := inv.startHost(ctx, inv.handler(nil))
	if err != nil {
		return err
	}
	defer hs.Close()
	if _, ok := hs.Prompt(name); !ok {
		return inv.notFound("prompt", name, hs)
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	res, err := hs.GetPrompt(ctx, name, args)
	return inv.reportPrompt(name, res, err)
}

func writePromptResult(w io.Writer, res *protocol.GetPromptResult) {
	if res.Description != "" {
		fmt.Fprintf(w, "%s\n\n", res.Description)
	}
	for _, m := range res.Messages {
		fmt.Fprintf(w, "[%s]\n", m.Role)
		writeContent(w, []protocol.Content{m.Content})
	}
}

// runConfigRead reads a resource from the one server that lists its URI.
func runConfigRead(ctx context.Context, inv *invocation) error {
	if len(inv.args) != 1 {
		return usagef("want exactly one resource URI")
	}
	uri := inv.args[0]
	hs, err := inv.startHost(ctx, inv.handler(nil))
	if err != nil {
		return err
	}
	defer hs.Close()
	var servers []string
	for _, r := range hs.Resources() {
		if r.Resource.URI == uri {
			servers = append(servers, r.Server)
		}
	}
	switch {
	case len(servers) == 0:
		return inv.notFound("resource", uri, hs)
	case len(servers) > 1:
		return usagef("%d servers list %s (%v): choose one with --server", len(servers), uri, servers)
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	res, err := hs.ReadResource(ctx, servers[0], uri)
	if err != nil {
		return fmt.Errorf("reading %s from %s: %w", uri, servers[0], err)
	}
	if inv.json {
		return writeJSON(inv.std.out, res)
	}
	writeResourceContents(inv.std.out, res.Contents, false)
	return nil
}
