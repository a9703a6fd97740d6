package main

import (
	"context"
	"flag"
	"fmt"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

var readCommand = &command{
	name:    "read",
	args:    "[TARGET] URI",
	summary: "read a resource",
	detail: `Reads the resource at URI and prints its contents: text as it is, binary
contents as their MIME type and size. Several contents (a directory, say) each
get a "[resource URI (type)]" header.`,
	examples: `conduit read file:///hello.txt
conduit read https://example.com/mcp docs://readme
conduit read --json file:///logo.png -- ./my-server | jq -r '.contents[0].blob' | base64 -d > logo.png`,
	output: `the ReadResourceResult as the server sent it:
{"contents": [{"uri": …, "mimeType": …, "text": … | "blob": …base64…}, …]}`,
	fixed: 1,
	setup: samplingFlag,
	run:   runRead,
}

func runRead(ctx context.Context, inv *invocation) error {
	if len(inv.args) != 1 {
		return usagef("want exactly one resource URI")
	}
	uri := inv.args[0]
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(ctx, inv.handler(nil))
	defer c.close()
	if err != nil {
		return err
	}
	res, err := c.ReadResource(ctx, uri)
	if err != nil {
		return fmt.Errorf("reading %s: %w", uri, err)
	}
	if inv.json {
		return writeJSON(inv.std.out, res)
	}
	writeResourceContents(inv.std.out, res.Contents, false)
	return nil
}

var promptCommand = &command{
	name:    "prompt",
	args:    "[TARGET] NAME [key=value ...]",
	summary: "render a prompt with arguments",
	detail: `Gets the prompt NAME with the given string arguments and prints its messages,
each under a "[role]" line.`,
	examples: `conduit prompt greet name=Ada
conduit prompt --json https://example.com/mcp code_review language=go`,
	output: `the GetPromptResult as the server sent it:
{"description": …, "messages": [{"role": "user", "content": {…content block…}}, …]}`,
	fixed: -1,
	setup: samplingFlag,
	run:   runPrompt,
}

func runPrompt(ctx context.Context, inv *invocation) error {
	if len(inv.args) == 0 {
		return usagef("name the prompt")
	}
	name := inv.args[0]
	args, err := parseStringArgs(inv.args[1:])
	if err != nil {
		return err
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(ctx, inv.handler(nil))
	defer c.close()
	if err != nil {
		return err
	}
	res, err := c.GetPrompt(ctx, name, args)
	return inv.reportPrompt(name, res, err)
}

var completeCommand = &command{
	name:    "complete",
	args:    "[TARGET] (--prompt NAME | --resource URI-TEMPLATE) ARG VALUE",
	summary: "ask for completions of a prompt or resource template argument",
	detail: `Asks the server to complete VALUE for the argument ARG of a prompt or of a
resource template, and prints the suggestions one per line.`,
	examples: `conduit complete --prompt greet name al
conduit complete --resource 'file:///{path}' path RE --json`,
	output: `{"values": ["alice", "albert"], "total": 2, "hasMore": false}   (total and hasMore when the server sent them)`,
	fixed:  2,
	setup: func(inv *invocation, fs *flag.FlagSet) {
		fs.StringVar(&inv.promptRef, "prompt", "", "complete an argument of the prompt `NAME`")
		fs.StringVar(&inv.resourceRef, "resource", "", "complete an argument of the resource template `URI-TEMPLATE`")
	},
	run: runComplete,
}

func runComplete(ctx context.Context, inv *invocation) error {
	var ref protocol.CompleteReference
	switch {
	case inv.promptRef != "" && inv.resourceRef != "":
		return usagef("give --prompt or --resource, not both")
	case inv.promptRef != "":
		ref = protocol.PromptReference(inv.promptRef)
	case inv.resourceRef != "":
		ref = protocol.ResourceTemplateReference(inv.resourceRef)
	default:
		return usagef("say what to complete with --prompt NAME or --resource URI-TEMPLATE")
	}
	if len(inv.args) != 2 {
		return usagef("want the argument name and the value to complete")
	}
	ctx, cancel := inv.withTimeout(ctx)
	defer cancel()
	c, err := inv.dial(ctx, nil)
	defer c.close()
	if err != nil {
		return err
	}
	res, err := c.Complete(ctx, ref, protocol.CompleteArgument{Name: inv.args[0], Value: inv.args[1]}, nil)
	if err != nil {
		return fmt.Errorf("completing %s: %w", inv.args[0], err)
	}
	comp := res.Completion
	if comp.Values == nil {
		comp.Values = []string{}
	}
	if inv.json {
		return writeJSON(inv.std.out, comp)
	}
	w := inv.std.out
	if len(comp.Values) > 0 {
		fmt.Fprintln(w, strings.Join(comp.Values, "\n"))
	}
	switch {
	case comp.HasMore != nil && *comp.HasMore && comp.Total != nil:
		fmt.Fprintf(inv.std.err, "(%d of %d shown; more are available)\n", len(comp.Values), *comp.Total)
	case comp.HasMore != nil && *comp.HasMore:
		fmt.Fprintf(inv.std.err, "(%d shown; more are available)\n", len(comp.Values))
	case len(comp.Values) == 0:
		fmt.Fprintln(inv.std.err, "(no completions)")
	}
	return nil
}

// reportPrompt prints the prompts/get result (or says why there is none),
// as text or, with --json, as the result itself.
func (inv *invocation) reportPrompt(name string, res *protocol.GetPromptResult, err error) error {
	if err != nil {
		return fmt.Errorf("getting prompt %s: %w", name, err)
	}
	if inv.json {
		return writeJSON(inv.std.out, res)
	}
	writePromptResult(inv.std.out, res)
	return nil
}
