package anthropicconduit

import (
	"context"
	"encoding/json"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/conduitmcp/conduit/toolset"
)

// Options configure the declarations and turns. The zero value (and nil)
// declare the tools without strict mode.
type Options struct {
	// Strict declares the tools with strict: true where their schemas
	// allow it.
	Strict bool
}

// inputSchema returns a converted schema in the SDK's type, every member
// but type kept raw (nested objects keep the server's order).
func inputSchema(schema json.RawMessage) anthropic.ToolInputSchemaParam {
	var top map[string]json.RawMessage
	_ = json.Unmarshal(schema, &top)
	var s anthropic.ToolInputSchemaParam
	for k, v := range top {
		switch k {
		case "type":
		case "properties":
			s.Properties = v
		case "required":
			_ = json.Unmarshal(v, &s.Required)
		default:
			if s.ExtraFields == nil {
				s.ExtraFields = map[string]any{}
			}
			s.ExtraFields[k] = v
		}
	}
	return s
}

// Tools declares set's tools for the messages API. A tool whose schema
// cannot be declared is left out and named in the error (see
// toolset.Set.Declarations); the tools returned are usable either way.
func Tools(set *toolset.Set, o *Options) ([]anthropic.ToolUnionParam, error) {
	d := toolset.Anthropic
	if o != nil && o.Strict {
		d = toolset.AnthropicStrict
	}
	decls, err := set.Declarations(d)
	out := make([]anthropic.ToolUnionParam, 0, len(decls))
	for _, decl := range decls {
		out = append(out, toolParam(decl))
	}
	return out, err
}

func toolParam(decl toolset.Declaration) anthropic.ToolUnionParam {
	t := &anthropic.ToolParam{Name: decl.Name, InputSchema: inputSchema(decl.Parameters)}
	if decl.Description != "" {
		t.Description = param.NewOpt(decl.Description)
	}
	if decl.Strict {
		t.Strict = param.NewOpt(true)
	}
	return anthropic.ToolUnionParam{OfTool: t}
}

// ToolResult turns a result into the tool_result block that answers the
// tool_use block toolUseID.
func ToolResult(toolUseID string, r *toolset.Result) anthropic.ContentBlockParamUnion {
	b := &anthropic.ToolResultBlockParam{ToolUseID: toolUseID}
	if r.IsError {
		b.IsError = param.NewOpt(true)
	}
	for _, p := range r.Parts {
		if p.Type == toolset.PartImage {
			b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: &anthropic.ImageBlockParam{
				Source: anthropic.ImageBlockParamSourceUnion{OfBase64: &anthropic.Base64ImageSourceParam{Data: p.Data, MediaType: anthropic.Base64ImageSourceMediaType(p.MIMEType)}},
			}})
			continue
		}
		b.Content = append(b.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: p.Text}})
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: b}
}

// ToolResults runs the tool_use blocks of msg through set and returns the
// user message that answers them all, as the API requires of a
// conversation, and whether there were any. The error is ctx's, when it
// ended the calls; the use it cut and the uses after it, not run, are
// then answered with that error.
func ToolResults(ctx context.Context, set *toolset.Set, msg *anthropic.Message) (anthropic.MessageParam, bool, error) {
	var blocks []anthropic.ContentBlockParamUnion
	var stopped error
	for _, c := range msg.Content {
		if c.Type != "tool_use" {
			continue
		}
		if stopped != nil {
			blocks = append(blocks, ToolResult(c.ID, &toolset.Result{Name: c.Name, IsError: true,
				Parts: []toolset.Part{{Type: toolset.PartText, Text: "The call was not run: " + ctx.Err().Error()}}}))
			continue
		}
		res, err := set.Call(ctx, c.Name, string(c.Input))
		if toolset.Stopped(ctx, err) {
			stopped = err
		}
		blocks = append(blocks, ToolResult(c.ID, res))
	}
	return anthropic.NewUserMessage(blocks...), len(blocks) > 0, stopped
}

// MessageTurn runs one turn of the tool loop: it asks the model with
// params (the set's tools declared when params.Tools is empty), appends
// its message to params.Messages and, when it used tools, runs them and
// appends the user message with their results. done reports that the
// model used none: its answer is msg.Content.
func MessageTurn(ctx context.Context, client *anthropic.Client, set *toolset.Set, params *anthropic.MessageNewParams, o *Options) (msg *anthropic.Message, done bool, err error) {
	if len(params.Tools) == 0 {
		params.Tools, _ = Tools(set, o)
	}
	msg, err = client.Messages.New(ctx, *params)
	if err != nil {
		return nil, false, err
	}
	params.Messages = append(params.Messages, msg.ToParam())
	results, used, err := ToolResults(ctx, set, msg)
	if !used {
		return msg, true, nil
	}
	params.Messages = append(params.Messages, results)
	return msg, false, err
}
