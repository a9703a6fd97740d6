package genaiconduit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"

	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/toolset"
)

// Options configure the declarations and turns. The zero value (and nil)
// declare parameters in the Schema type.
type Options struct {
	// JSONSchema declares parametersJsonSchema instead of parameters.
	JSONSchema bool
}

// Tools declares set's tools as one genai tool of function declarations.
// A tool whose schema cannot be declared is left out and named in the
// error (see toolset.Set.Declarations); the tools returned are usable
// either way.
func Tools(set *toolset.Set, o *Options) ([]*genai.Tool, error) {
	d := toolset.Gemini
	if o != nil && o.JSONSchema {
		d = toolset.GeminiJSONSchema
	}
	decls, err := set.Declarations(d)
	tool := &genai.Tool{}
	for _, decl := range decls {
		fd, ferr := declaration(decl, d)
		if ferr != nil {
			err = errors.Join(err, ferr)
			continue
		}
		tool.FunctionDeclarations = append(tool.FunctionDeclarations, fd)
	}
	if len(tool.FunctionDeclarations) == 0 {
		return nil, err
	}
	return []*genai.Tool{tool}, err
}

func declaration(decl toolset.Declaration, d toolset.Dialect) (*genai.FunctionDeclaration, error) {
	fd := &genai.FunctionDeclaration{Name: decl.Name, Description: decl.Description}
	switch {
	case decl.Parameters == nil:
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

// FunctionResponse turns a result into the functionResponse part that
// answers call.
func FunctionResponse(call *genai.FunctionCall, r *toolset.Result) *genai.Part {
	var media []*genai.FunctionResponsePart
	// A builder: a result may have tens of thousands of short parts.
	var text strings.Builder
	for _, p := range r.Parts {
		if p.Type == toolset.PartImage {
			data, err := base64.StdEncoding.DecodeString(p.Data)
			if err == nil {
				media = append(media, &genai.FunctionResponsePart{InlineData: &genai.FunctionResponseBlob{MIMEType: p.MIMEType, Data: data}})
				continue
			}
		}
		if text.Len() > 0 {
			text.WriteByte('\n')
		}
		text.WriteString(p.Text)
	}
	var out any = text.String()
	if len(r.Structured) > 0 && !r.IsError {
		var v any
		if json.Unmarshal(r.Structured, &v) == nil {
			out = v
		}
	}
	key := "output"
	if r.IsError {
		key = "error"
	}
	part := genai.NewPartFromFunctionResponseWithParts(call.Name, map[string]any{key: out}, media)
	part.FunctionResponse.ID = call.ID
	return part
}

// FunctionResponses runs the function calls of resp through set and
// returns the content that answers them all, as the API requires of a
// conversation, and whether there were any. The error is ctx's, when it
// ended the calls; the call it cut and the calls after it, not run, are
// then answered with that error.
func FunctionResponses(ctx context.Context, set *toolset.Set, resp *genai.GenerateContentResponse) (*genai.Content, bool, error) {
	var parts []*genai.Part
	var stopped error
	for _, call := range functionCalls(resp) {
		if stopped != nil {
			parts = append(parts, FunctionResponse(call, &toolset.Result{Name: call.Name, IsError: true,
				Parts: []toolset.Part{{Type: toolset.PartText, Text: "The call was not run: " + ctx.Err().Error()}}}))
			continue
		}
		args, _ := json.Marshal(call.Args)
		if call.Args == nil {
			args = []byte("{}")
		}
		res, err := set.Call(ctx, call.Name, string(args))
		if toolset.Stopped(ctx, err) {
			stopped = err
		}
		parts = append(parts, FunctionResponse(call, res))
	}
	return genai.NewContentFromParts(parts, genai.RoleUser), len(parts) > 0, stopped
}

// functionCalls returns the function calls of resp's first candidate, in
// order. Unlike resp.FunctionCalls, it skips a null part of the model's
// answer, which that method dereferences.
func functionCalls(resp *genai.GenerateContentResponse) []*genai.FunctionCall {
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return nil
	}
	var calls []*genai.FunctionCall
	for _, p := range resp.Candidates[0].Content.Parts {
		if p != nil && p.FunctionCall != nil {
			calls = append(calls, p.FunctionCall)
		}
	}
	return calls
}

// ContentTurn runs one turn of the tool loop: it asks model with
// contents and config (the set's tools declared when config has none),
// appends the model's content to contents and, when it called functions,
// runs them and appends their responses. done reports that the model
// called none: its answer is resp.Text(). config may be nil.
func ContentTurn(ctx context.Context, client *genai.Client, model string, set *toolset.Set, contents *[]*genai.Content, config *genai.GenerateContentConfig, o *Options) (resp *genai.GenerateContentResponse, done bool, err error) {
	cfg := genai.GenerateContentConfig{}
	if config != nil {
		cfg = *config
	}
	if len(cfg.Tools) == 0 {
		cfg.Tools, _ = Tools(set, o)
	}
	resp, err = client.Models.GenerateContent(ctx, model, *contents, &cfg)
	if err != nil {
		return nil, false, err
	}
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return resp, true, nil
	}
	*contents = append(*contents, resp.Candidates[0].Content)
	answer, used, err := FunctionResponses(ctx, set, resp)
	if !used {
		return resp, true, nil
	}
	*contents = append(*contents, answer)
	return resp, false, err
}
