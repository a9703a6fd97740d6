package toolset

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/conduitmcp/conduit/protocol"
)

// Dialect is a provider's way of declaring tools: its subset of JSON
// Schema and its rules for the root of a parameters schema.
type Dialect int

// The dialects.
const (
	// OpenAI is function calling without strict mode (chat completions'
	// tools[].function.parameters, the responses API's function tools):
	// JSON Schema, the root an object with "properties" and without
	// allOf, anyOf, oneOf, enum or not (they move into the description),
	// every array with "items", local $refs only.
	OpenAI Dialect = iota + 1
	// OpenAIStrict is function calling with strict: true (Structured
	// Outputs): every object has additionalProperties: false and lists
	// every property in required, the optional ones made nullable (a null
	// the model writes for them is removed again by [Set.Call]); only
	// anyOf among the combinators; formats date-time, time, date,
	// duration, email, hostname, ipv4, ipv6 and uuid; at most 10 levels
	// of nesting. A tool that cannot be expressed so is declared without
	// strict mode ([Declaration.Strict] false) and the reason is a
	// [Loss].
	OpenAIStrict
	// Anthropic is the messages API's input_schema: JSON Schema (draft
	// 2020-12), the root an object.
	Anthropic
	// AnthropicStrict is input_schema for a tool with strict: true:
	// additionalProperties: false on objects, $ref without siblings, no
	// recursion, oneOf read as anyOf, formats date-time, time, date,
	// duration, email, hostname, uri, ipv4, ipv6 and uuid, minItems 0
	// or 1, no numeric or length bounds (they move into the
	// description). A tool that cannot be expressed so is declared
	// without strict mode, as for [OpenAIStrict].
	AnthropicStrict
	// Gemini is generateContent's FunctionDeclaration.parameters: the
	// OpenAPI 3.0 subset of the Schema type (upper-case types, nullable,
	// enums of strings on strings only, no $ref: references are inlined
	// and a recursive one is cut, no additionalProperties, no object
	// without properties and no array without items). A tool without parameters has nil
	// [Declaration.Parameters].
	Gemini
	// GeminiJSONSchema is FunctionDeclaration.parametersJsonSchema: JSON
	// Schema without $schema, with $ref/$defs, anyOf/oneOf, enum,
	// format, items/prefixItems, minimum/maximum, minItems/maxItems and
	// additionalProperties; other keywords move into the description.
	GeminiJSONSchema
)

var dialectNames = map[Dialect]string{
	OpenAI: "openai", OpenAIStrict: "openai-strict", Anthropic: "anthropic",
	AnthropicStrict: "anthropic-strict", Gemini: "gemini", GeminiJSONSchema: "gemini-jsonschema",
}

// String returns the dialect's name, such as "openai-strict".
func (d Dialect) String() string {
	if n, ok := dialectNames[d]; ok {
		return n
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

func (d Dialect) strict() bool { return d == OpenAIStrict || d == AnthropicStrict }

// loose is the dialect a strict one falls back to.
func (d Dialect) loose() Dialect {
	switch d {
	case OpenAIStrict:
		return OpenAI
	case AnthropicStrict:
		return Anthropic
	}
	return d
}

// Declaration is a tool as one provider's API declares it.
type Declaration struct {
	// Name is the tool's name for the model ([Tool.Name]).
	Name string
	// Description is the tool's description, or its title when it has
	// none.
	Description string
	// Parameters is the schema of the arguments in the dialect. nil only
	// for [Gemini] when the tool takes no arguments.
	Parameters json.RawMessage
	// Strict reports whether the declaration is in strict mode: true for
	// the strict dialects unless the tool could not be expressed in
	// their subset.
	Strict bool
	// Losses lists what the conversion could not keep as the server
	// wrote it. Empty when nothing was lost.
	Losses []Loss
}

// Loss is one part of a schema that a dialect cannot express, and what
// became of it.
type Loss struct {
	// Path is the JSON pointer of the schema node in the tool's
	// inputSchema ("" for the root).
	Path string
	// Keyword is the keyword concerned, such as "format" or "oneOf".
	Keyword string
	// Note says what was done, such as "moved into the description".
	Note string
}

func (l Loss) String() string { return fmt.Sprintf("%s %s: %s", pathOrRoot(l.Path), l.Keyword, l.Note) }

func pathOrRoot(p string) string {
	if p == "" {
		return "(root)"
	}
	return p
}

// Declarations returns the declarations of s's tools in dialect d, in the
// order of [Set.Tools]. A tool whose schema cannot be converted at all
// (not JSON, a root that is not an object, a $ref that is not local) is
// left out, and the returned error, an errors.Join of [*SchemaError]s,
// says which and why; the declarations returned are usable either way.
// The result is computed once per dialect; callers must not modify it.
func (s *Set) Declarations(d Dialect) ([]Declaration, error) {
	if _, ok := dialectNames[d]; !ok {
		return nil, fmt.Errorf("toolset: unknown dialect %v", d)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ds, ok := s.decls[d]; ok {
		return ds, s.errs[d]
	}
	var out []Declaration
	var errs []error
	pool := setSchemaBudget // shared: a server may list thousands of tools
	for _, t := range s.tools {
		decl, err := convert(t, d, &pool)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, decl)
	}
	if s.decls == nil {
		s.decls, s.errs = map[Dialect][]Declaration{}, map[Dialect]error{}
	}
	s.decls[d], s.errs[d] = out, errors.Join(errs...)
	return out, s.errs[d]
}

// Convert returns t's declaration in dialect d. The error is a
// [*SchemaError].
func Convert(t Tool, d Dialect) (Declaration, error) {
	pool := minSchemaBudget
	return convert(t, d, &pool)
}

// convert is [Convert], drawing on *pool past four times the schema's
// size (see convertSchema).
func convert(t Tool, d Dialect, pool *int) (Declaration, error) {
	decl := Declaration{Name: t.Name, Description: description(t.Tool)}
	params, losses, err := convertSchema(t.Tool.InputSchema, d, pool)
	if err == nil || !d.strict() || !isStrictFailure(err) {
		if err != nil {
			return Declaration{}, schemaError(t.Name, d, err)
		}
		decl.Parameters, decl.Losses, decl.Strict = params, losses, d.strict()
		return decl, nil
	}
	why := err.(*strictFailure)
	params, losses, err = convertSchema(t.Tool.InputSchema, d.loose(), pool)
	if err != nil {
		return Declaration{}, schemaError(t.Name, d, err)
	}
	decl.Parameters = params
	decl.Losses = append([]Loss{{Path: why.path, Keyword: "strict", Note: "declared without strict mode: " + why.reason}}, losses...)
	return decl, nil
}

// description is the tool's description, else its title, else its
// annotations' title.
func description(t protocol.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil:
		return t.Annotations.Title
	}
	return ""
}

func schemaError(name string, d Dialect, err error) *SchemaError {
	se := &SchemaError{Tool: name, Dialect: d, Err: err}
	var pe *pathError
	if errors.As(err, &pe) {
		se.Path, se.Err = pe.path, pe.err
	}
	return se
}
