package openaiconduit

import (
	"encoding/json"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/conduitmcp/conduit/toolset"
)

// Options configure the declarations and turns. The zero value (and nil)
// declare the tools without strict mode.
type Options struct {
	// Strict declares the tools in strict mode (Structured Outputs) where
	// their schemas allow it.
	Strict bool
}

func dialect(o *Options) toolset.Dialect {
	if o != nil && o.Strict {
		return toolset.OpenAIStrict
	}
	return toolset.OpenAI
}

// parameters returns a schema as the SDK's map, its members kept raw so
// that nested objects keep the server's order of properties.
func parameters(schema json.RawMessage) map[string]any {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(schema, &top); err != nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	out := make(map[string]any, len(top))
	for k, v := range top {
		out[k] = v
	}
	return out
}

// ChatTools declares set's tools for chat completions. A tool whose
// schema cannot be declared is left out and named in the error (see
// toolset.Set.Declarations); the tools returned are usable either way.
func ChatTools(set *toolset.Set, o *Options) ([]openai.ChatCompletionToolUnionParam, error) {
	decls, err := set.Declarations(dialect(o))
	out := make([]openai.ChatCompletionToolUnionParam, 0, len(decls))
	for _, d := range decls {
		fn := shared.FunctionDefinitionParam{Name: d.Name, Parameters: parameters(d.Parameters)}
		if d.Description != "" {
			fn.Description = param.NewOpt(d.Description)
		}
		if d.Strict {
			fn.Strict = param.NewOpt(true)
		}
		out = append(out, openai.ChatCompletionFunctionTool(fn))
	}
	return out, err
}

// ResponseTools declares set's tools for the responses API, as
// [ChatTools] does for chat completions.
func ResponseTools(set *toolset.Set, o *Options) ([]responses.ToolUnionParam, error) {
	decls, err := set.Declarations(dialect(o))
	out := make([]responses.ToolUnionParam, 0, len(decls))
	for _, d := range decls {
		fn := &responses.FunctionToolParam{Name: d.Name, Parameters: parameters(d.Parameters), Strict: param.NewOpt(d.Strict)}
		if d.Description != "" {
			fn.Description = param.NewOpt(d.Description)
		}
		out = append(out, responses.ToolUnionParam{OfFunction: fn})
	}
	return out, err
}
