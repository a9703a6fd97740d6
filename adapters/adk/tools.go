package adkconduit

import (
	"context"
	"encoding/json"
	"errors"

	"google.golang.org/adk/agent"
	"google.golang.org/adk/model"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/toolset"
)

// Options configure a [Toolset]. The zero value (and nil) declare
// parameters as parametersJsonSchema.
type Options struct {
	// Name is the toolset's name for ADK; "conduit" when empty.
	Name string
	// SchemaType declares parameters in genai's Schema type (the
	// OpenAPI 3.0 subset, toolset.Gemini) instead of parametersJsonSchema
	// (toolset.GeminiJSONSchema), for models that take only that.
	SchemaType bool
}

// Toolset is the tools of a toolset.Set as an ADK tool.Toolset: give it
// to llmagent.Config.Toolsets. Its tools are declared to the model as
// function declarations and run through the Set when the model calls
// them.
type Toolset struct {
	name  string
	tools []tool.Tool
}

var _ tool.Toolset = (*Toolset)(nil)

// New declares set's tools for ADK. A tool whose schema cannot be
// declared is left out and named in the error (see
// toolset.Set.Declarations); the Toolset returned is usable either way.
func New(set *toolset.Set, o *Options) (*Toolset, error) {
	ts := &Toolset{name: "conduit"}
	d := toolset.GeminiJSONSchema
	if o != nil {
		if o.Name != "" {
			ts.name = o.Name
		}
		if o.SchemaType {
			d = toolset.Gemini
		}
	}
	decls, err := set.Declarations(d)
	for _, decl := range decls {
		fd, ferr := declaration(decl, d)
		if ferr != nil {
			err = errors.Join(err, ferr)
			continue
		}
		ts.tools = append(ts.tools, &mcpTool{set: set, decl: fd})
	}
	return ts, err
}

// Name returns the toolset's name.
func (ts *Toolset) Name() string { return ts.name }

// Tools returns the tools; the same for every context.
func (ts *Toolset) Tools(agent.ReadonlyContext) ([]tool.Tool, error) {
	return append([]tool.Tool(nil), ts.tools...), nil
}

// declaration makes a function declaration of decl. It never sets a
// parameters field to a null schema: a tool without parameters has
// neither field.
func declaration(decl toolset.Declaration, d toolset.Dialect) (*genai.FunctionDeclaration, error) {
	fd := &genai.FunctionDeclaration{Name: decl.Name, Description: decl.Description}
	switch {
	case len(decl.Parameters) == 0 || string(decl.Parameters) == "null":
	case d == toolset.GeminiJSONSchema:
		fd.ParametersJsonSchema = decl.Parameters
	default:
		fd.Parameters = &genai.Schema{}
		if err := json.Unmarshal(decl.Parameters, fd.Parameters); err != nil {
			return nil, &toolset.SchemaError{Tool: decl.Name, Dialect: d, Err: err}
		}
	}
	return fd, nil
}

// ToolError is what a tool's Run returns when the model reads an error:
// the tool reported one (isError), or the call could not be made (a
// failure of the server or the transport). ADK gives the model {"error": Error()}, the tool's own words,
// and goes on with the run.
type ToolError struct {
	// Result is the outcome as the model reads it; Result.Raw is the
	// server's result when the tool ran.
	Result *toolset.Result
	// Err is the *toolset.CallError when the call did not run to an
	// answer of the tool, nil for a tool's isError result.
	Err error
}

func (e *ToolError) Error() string { return e.Result.Text() }

// Unwrap returns e.Err.
func (e *ToolError) Unwrap() error { return e.Err }

// mcpTool is one tool of a set. It has the method set of ADK's function
// tools (Declaration, Run, ProcessRequest), which the flow calls.
type mcpTool struct {
	set  *toolset.Set
	decl *genai.FunctionDeclaration
}

func (t *mcpTool) Name() string                            { return t.decl.Name }
func (t *mcpTool) Description() string                     { return t.decl.Description }
func (t *mcpTool) IsLongRunning() bool                     { return false }
func (t *mcpTool) Declaration() *genai.FunctionDeclaration { return t.decl }

// ProcessRequest adds the tool to the request, as ADK's own tools do: by
// name in req.Tools (where the flow finds it when the model calls it) and
// as a function declaration in the config.
func (t *mcpTool) ProcessRequest(_ agent.ToolContext, req *model.LLMRequest) error {
	if req.Tools == nil {
		req.Tools = map[string]any{}
	}
	if _, ok := req.Tools[t.decl.Name]; ok {
		return errors.New("adkconduit: duplicate tool: " + t.decl.Name)
	}
	req.Tools[t.decl.Name] = t
	if req.Config == nil {
		req.Config = &genai.GenerateContentConfig{}
	}
	for _, gt := range req.Config.Tools {
		if gt != nil && gt.FunctionDeclarations != nil {
			gt.FunctionDeclarations = append(gt.FunctionDeclarations, t.decl)
			return nil
		}
	}
	req.Config.Tools = append(req.Config.Tools, &genai.Tool{FunctionDeclarations: []*genai.FunctionDeclaration{t.decl}})
	return nil
}

// Run calls the tool with the model's arguments. The result is
// {"output": …}: the structured content when there is one, else the text
// (images and other content described in it). An error the model should
// read is a *ToolError; when ctx ends, its error.
func (t *mcpTool) Run(ctx agent.ToolContext, args any) (map[string]any, error) {
	raw, err := json.Marshal(args)
	if err != nil || string(raw) == "null" {
		raw = []byte("{}") // no arguments (args cannot fail to marshal: ADK decoded them from JSON)
	}
	res, err := t.set.Call(ctx, t.decl.Name, string(raw))
	if err != nil && ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, ctx.Err()
	}
	if err != nil || res.IsError {
		return nil, &ToolError{Result: res, Err: err}
	}
	var out any = res.Text()
	if len(res.Structured) > 0 {
		var v any
		if json.Unmarshal(res.Structured, &v) == nil {
			out = v
		}
	}
	return map[string]any{"output": out}, nil
}
