package main

import (
	"context"
	"fmt"
	"io"
	"iter"
	"maps"
	"slices"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

// listCommand builds the tools, prompts, resources and templates
// commands, which differ only in what they list and how it is shown.
func listCommand(what string) *command {
	c := &command{name: what, args: "[TARGET]", fixed: 0}
	switch what {
	case "tools":
		c.summary = "list the tools: name, title, arguments (* = required), description"
		c.detail = "Lists every tool (walking all pages). In ARGUMENTS a * marks a required argument."
		c.detail += "\nOn modern Streamable HTTP, tools with invalid x-mcp-header annotations cannot be\n" +
			"called and are left out of the list, as the specification requires: they are listed\n" +
			"after it, with the reason."
		c.output = `{"tools": [ …Tool objects as the server sent them: name, title, description,
            inputSchema, outputSchema, annotations, … ],
 "dropped": [ {"name": "…", "reason": "…"}, … the tools left out (invalid x-mcp-header) ]}`
		c.examples = "conduit tools\nconduit tools https://example.com/mcp --json | jq -r '.tools[].name'"
	case "prompts":
		c.summary = "list the prompts: name, title, arguments (* = required), description"
		c.detail = "Lists every prompt (walking all pages). In ARGUMENTS a * marks a required argument."
		c.output = `{"prompts": [ …Prompt objects: name, title, description, arguments, … ]}`
		c.examples = "conduit prompts\nconduit prompts -- ./my-server --json"
	case "resources":
		c.summary = "list the resources: URI, name, title, MIME type, description"
		c.detail = "Lists every resource (walking all pages)."
		c.output = `{"resources": [ …Resource objects: uri, name, title, description, mimeType, size, … ]}`
		c.examples = "conduit resources\nconduit resources ws://127.0.0.1:8080/mcp"
	case "templates":
		c.summary = "list the resource templates: URI template, name, title, MIME type, description"
		c.detail = "Lists every resource template (walking all pages)."
		c.output = `{"resourceTemplates": [ …ResourceTemplate objects: uriTemplate, name, title, description, mimeType, … ]}`
		c.examples = "conduit templates\nconduit templates --json -- ./my-server"
	}
	c.run = func(ctx context.Context, inv *invocation) error { return runList(ctx, inv, what) }
	return c
}

func runList(ctx context.Context, inv *invocation, what string) error {
	if len(inv.args) > 0 {
		return usagef("unexpected argument %q", inv.args[0])
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(ctx, nil)
	defer c.close()
	if err != nil {
		return err
	}
	w := inv.std.out
	switch what {
	case "tools":
		tools, err := collect(c.Tools(ctx))
		if err != nil {
			return fmt.Errorf("listing tools: %w", err)
		}
		dropped := droppedTools(c.DroppedTools())
		if inv.json {
			return writeJSON(w, map[string]any{"tools": tools, "dropped": dropped})
		}
		writeToolTable(w, tools)
		writeDropped(w, dropped)
	case "prompts":
		prompts, err := collect(c.Prompts(ctx))
		if err != nil {
			return fmt.Errorf("listing prompts: %w", err)
		}
		if inv.json {
			return writeJSON(w, map[string]any{"prompts": prompts})
		}
		t := newTable(w, "NAME", "TITLE", "ARGUMENTS", "DESCRIPTION")
		for _, p := range prompts {
			t.row(p.Name, p.Title, promptArgs(p.Arguments), p.Description)
		}
		t.flush()
	case "resources":
		res, err := collect(c.Resources(ctx))
		if err != nil {
			return fmt.Errorf("listing resources: %w", err)
		}
		if inv.json {
			return writeJSON(w, map[string]any{"resources": res})
		}
		t := newTable(w, "URI", "NAME", "TITLE", "MIME TYPE", "DESCRIPTION")
		for _, r := range res {
			t.row(r.URI, r.Name, r.Title, r.MIMEType, r.Description)
		}
		t.flush()
	case "templates":
		res, err := collect(c.ResourceTemplates(ctx))
		if err != nil {
			return fmt.Errorf("listing resource templates: %w", err)
		}
		if inv.json {
			return writeJSON(w, map[string]any{"resourceTemplates": res})
		}
		t := newTable(w, "URI TEMPLATE", "NAME", "TITLE", "MIME TYPE", "DESCRIPTION")
		for _, r := range res {
			t.row(r.URITemplate, r.Name, r.Title, r.MIMEType, r.Description)
		}
		t.flush()
	}
	return nil
}

// writeToolTable prints tools as a table.
func writeToolTable(w io.Writer, tools []protocol.Tool) {
	t := newTable(w, "NAME", "TITLE", "ARGUMENTS", "DESCRIPTION")
	for _, tool := range tools {
		title := tool.Title
		if title == "" && tool.Annotations != nil {
			title = tool.Annotations.Title
		}
		t.row(tool.Name, title, parseObjectSchema(tool.InputSchema).summary(), tool.Description)
	}
	t.flush()
}

// droppedTool is a tool the client left out of the listing.
type droppedTool struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// droppedTools sorts the client's dropped tools by name; never nil, so
// JSON shows [].
func droppedTools(m map[string]error) []droppedTool {
	out := []droppedTool{}
	for _, name := range slices.Sorted(maps.Keys(m)) {
		// The reason without the package prefix, as the client's errors read.
		out = append(out, droppedTool{Name: name, Reason: strings.TrimPrefix(m[name].Error(), "transport: ")})
	}
	return out
}

// writeDropped prints the dropped tools after the tool table.
func writeDropped(w io.Writer, dropped []droppedTool) {
	if len(dropped) == 0 {
		return
	}
	fmt.Fprintf(w, "\nLeft out (%d): invalid x-mcp-header annotations, so these tools cannot be called over Streamable HTTP:\n", len(dropped))
	t := newTable(w, "NAME", "REASON")
	for _, d := range dropped {
		t.row(d.Name, d.Reason)
	}
	t.flush()
}

func promptArgs(args []protocol.PromptArgument) string {
	s := ""
	for i, a := range args {
		if i > 0 {
			s += ", "
		}
		s += a.Name
		if a.Required {
			s += "*"
		}
	}
	return s
}

// collect drains a listing iterator; a nil slice becomes empty so JSON
// shows [].
func collect[T any](seq iter.Seq2[T, error]) ([]T, error) {
	out := []T{}
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}
