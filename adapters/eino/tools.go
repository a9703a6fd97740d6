package einoconduit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/eino-contrib/jsonschema"

	"github.com/conduitmcp/conduit/toolset"
)

// Options are the settings of [Tools] and [EnhancedTools]. The zero value
// (or nil) is ready to use.
type Options struct {
	// Dialect is the schema dialect the model behind the agent takes:
	// toolset.OpenAI when zero. Eino hands the schema to the model's own
	// client, which sends it as it is.
	Dialect toolset.Dialect
}

func (o *Options) dialect() toolset.Dialect {
	if o == nil || o.Dialect == 0 {
		return toolset.OpenAI
	}
	return o.Dialect
}

// errorPrefix starts the text of a tool's own error: Eino's tool results
// have no error flag.
const errorPrefix = "The tool reported an error:\n"

// mcpTool is what both kinds of tool share: the set, the tool's name
// and its declaration for the model.
type mcpTool struct {
	set  *toolset.Set
	info *schema.ToolInfo
}

// Info returns the tool's name, description and parameters.
func (t *mcpTool) Info(context.Context) (*schema.ToolInfo, error) { return t.info, nil }

// call runs the tool. The error is ctx's, when it ended the call; every
// other failure is in the result, for the model to read.
func (t *mcpTool) call(ctx context.Context, args string) (*toolset.Result, error) {
	res, err := t.set.Call(ctx, t.info.Name, args)
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, err
	}
	return res, nil
}

// textTool is a [tool.InvokableTool].
type textTool struct{ mcpTool }

// InvokableRun calls the tool with the arguments the model wrote and
// returns its result as text.
func (t *textTool) InvokableRun(ctx context.Context, args string, _ ...tool.Option) (string, error) {
	res, err := t.call(ctx, args)
	if err != nil {
		return "", err
	}
	if res.IsError {
		return errorPrefix + res.Text(), nil
	}
	return res.Text(), nil
}

// enhancedTool is a [tool.EnhancedInvokableTool].
type enhancedTool struct{ mcpTool }

// InvokableRun calls the tool with the arguments the model wrote and
// returns its result as text and image parts.
func (t *enhancedTool) InvokableRun(ctx context.Context, arg *schema.ToolArgument, _ ...tool.Option) (*schema.ToolResult, error) {
	args := ""
	if arg != nil {
		args = arg.Text
	}
	res, err := t.call(ctx, args)
	if err != nil {
		return nil, err
	}
	return toolResult(res), nil
}

// toolResult is res in Eino's parts; an error result starts with a text
// part that says so.
func toolResult(res *toolset.Result) *schema.ToolResult {
	out := &schema.ToolResult{Parts: make([]schema.ToolOutputPart, 0, len(res.Parts)+1)}
	if res.IsError {
		out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeText, Text: errorPrefix})
	}
	for _, p := range res.Parts {
		switch p.Type {
		case toolset.PartImage:
			data := p.Data
			out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeImage, Image: &schema.ToolOutputImage{
				MessagePartCommon: schema.MessagePartCommon{Base64Data: &data, MIMEType: p.MIMEType},
			}})
		default:
			out.Parts = append(out.Parts, schema.ToolOutputPart{Type: schema.ToolPartTypeText, Text: p.Text})
		}
	}
	return out
}

// Tools returns the set's tools as Eino tools with text results, for a
// compose.ToolsNodeConfig. A tool whose schema cannot be declared is left
// out; the error joins a *toolset.SchemaError for each, and the other
// tools are returned with it.
func Tools(set *toolset.Set, o *Options) ([]tool.BaseTool, error) {
	return tools(set, o, func(m mcpTool) tool.BaseTool { return &textTool{m} })
}

// EnhancedTools is [Tools] with multimodal results: a tool's images reach
// the model as image parts.
func EnhancedTools(set *toolset.Set, o *Options) ([]tool.BaseTool, error) {
	return tools(set, o, func(m mcpTool) tool.BaseTool { return &enhancedTool{m} })
}

func tools(set *toolset.Set, o *Options, wrap func(mcpTool) tool.BaseTool) ([]tool.BaseTool, error) {
	decls, declErr := set.Declarations(o.dialect())
	out := make([]tool.BaseTool, 0, len(decls))
	for _, d := range decls {
		info, err := toolInfo(d, o.dialect())
		if err != nil {
			declErr = errors.Join(declErr, err)
			continue
		}
		out = append(out, wrap(mcpTool{set: set, info: info}))
	}
	return out, declErr
}

// toolInfo is d as Eino declares a tool.
func toolInfo(d toolset.Declaration, dialect toolset.Dialect) (*schema.ToolInfo, error) {
	info := &schema.ToolInfo{Name: d.Name, Desc: d.Description}
	if len(d.Parameters) == 0 {
		return info, nil
	}
	var js jsonschema.Schema
	if err := json.Unmarshal(d.Parameters, &js); err != nil {
		return nil, &toolset.SchemaError{Tool: d.Name, Dialect: dialect, Err: fmt.Errorf("eino's JSON Schema type: %w", err)}
	}
	info.ParamsOneOf = schema.NewParamsOneOfByJSONSchema(&js)
	return info, nil
}
