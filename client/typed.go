package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"net/url"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// errRemoteRef is matched (through the schema compiler's error) when an
// outputSchema refers to an external document: schemas are never fetched.
var errRemoteRef = errors.New("client: schema references an external document")

// refusingLoader is the schema loader: every $ref outside the schema
// itself is refused, so validating a peer's schema never touches the
// network or the file system.
type refusingLoader struct{}

func (refusingLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("%w: %s", errRemoteRef, u)
}

// Bounds of an outputSchema compiled: the compiler's time grows with the
// square of a schema's subschemas and the cube of their nesting (a 40 kB
// schema nested 2000 deep took it minutes), while real schemas are a
// few kilobytes and a few levels deep.
const (
	maxSchemaBytes = 64 << 10
	maxSchemaDepth = 64 // JSON objects and arrays within each other
)

// Bounds of a number the schema validator reads, in an outputSchema or
// in structuredContent: it parses numbers into math/big values, whose
// time grows with the exponent (1e999999 takes 25 ms) and with the square
// of the digits (a million take 1.5 s), and an exponent past a million
// is not parsed at all (the validator then dereferences a nil value and
// panics). Real numbers have a few dozen digits and an exponent within
// float64's ±308.
const (
	maxNumberDigits   = 1000
	maxNumberExponent = 1000
)

// compileSchema compiles a tool's outputSchema (JSON Schema 2020-12 by
// default), and returns it with its graph. A schema past maxSchemaBytes
// or maxSchemaDepth, with a number past maxNumberDigits or
// maxNumberExponent, or with a cycle of in-place applicators (see
// schemaGraph.inPlaceCycle) is an error.
func compileSchema(toolName string, raw json.RawMessage) (*jsonschema.Schema, *schemaGraph, error) {
	if len(raw) > maxSchemaBytes {
		return nil, nil, fmt.Errorf("outputSchema is larger than %d bytes", maxSchemaBytes)
	}
	if jsonDeeper(raw, maxSchemaDepth) {
		return nil, nil, fmt.Errorf("outputSchema nests objects and arrays more than %d deep", maxSchemaDepth)
	}
	if lit, ok := hugeNumber(raw); ok {
		return nil, nil, fmt.Errorf("outputSchema has a number with more than %d digits or an exponent past ±%d: %s", maxNumberDigits, maxNumberExponent, lit)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, err
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(refusingLoader{})
	comp.DefaultDraft(jsonschema.Draft2020)
	loc := "urn:conduit:tool:" + url.PathEscape(toolName) + ":output"
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, nil, err
	}
	sch, err := comp.Compile(loc)
	if err != nil {
		// The library's LoadURLError has no Unwrap: surface our refusal.
		var lue *jsonschema.LoadURLError
		if errors.As(err, &lue) && errors.Is(lue.Err, errRemoteRef) {
			return nil, nil, fmt.Errorf("compiling outputSchema: %w", lue.Err)
		}
		return nil, nil, err
	}
	g := newSchemaGraph(sch)
	if g.inPlaceCycle() {
		return nil, nil, errors.New("outputSchema's $ref, allOf, anyOf, oneOf, not, if, then, else or dependentSchemas lead from a subschema back to itself")
	}
	return sch, g, nil
}

// jsonDeeper reports whether the JSON text b nests objects and arrays
// more than limit deep (b need not be valid: the parser judges that).
func jsonDeeper(b []byte, limit int) bool {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
		case '{', '[':
			if depth++; depth > limit {
				return true
			}
		case '}', ']':
			depth--
		}
	}
	return false
}

// stringEnd returns the index after the string that opens at b[i] (a
// '"'), or len(b) when it does not end: the scanners of JSON text that
// need not be valid (jsonDeeper, hugeNumber) skip strings with it.
func stringEnd(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// hugeNumber returns the first number literal of the JSON text b (which
// need not be valid) that has more than maxNumberDigits digits or an
// exponent past ±maxNumberExponent, cut after 40 bytes.
func hugeNumber(b []byte) (lit string, ok bool) {
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			i = stringEnd(b, i) - 1
		case c == '-' || '0' <= c && c <= '9':
			start, digits := i, 0
			for ; i < len(b) && ('0' <= b[i] && b[i] <= '9' || b[i] == '-' || b[i] == '.'); i++ {
				if b[i] != '-' && b[i] != '.' {
					digits++
				}
			}
			exp := 0
			if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
				for i++; i < len(b) && (b[i] == '+' || b[i] == '-'); i++ {
				}
				for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
					if exp = exp*10 + int(b[i]-'0'); exp > maxNumberExponent {
						exp = maxNumberExponent + 1 // no overflow, however many digits follow
					}
				}
			}
			if digits > maxNumberDigits || exp > maxNumberExponent {
				if i-start > 40 {
					return string(b[start:start+40]) + "…", true
				}
				return string(b[start:i]), true
			}
			i-- // b[i] is not part of the number
		}
	}
	return "", false
}

// outputSchema returns the compiled outputSchema of info and its graph,
// or nil when the tool has none.
func (info *toolInfo) outputSchema() (*jsonschema.Schema, *schemaGraph, error) {
	o := &info.out
	o.once.Do(func() {
		raw := bytes.TrimSpace(info.schemaRaw)
		if len(raw) == 0 || string(raw) == "null" {
			return
		}
		o.schema, o.graph, o.err = compileSchema(info.name, raw)
	})
	return o.schema, o.graph, o.err
}

// CallToolAs calls a tool and decodes its structured result into T.
//
// The tool's outputSchema comes from the tools list (fetched once per
// connection and refreshed after a tools list_changed notification; every
// listing updates it, and a complete [Client.Tools] walk forgets the tools
// it no longer lists). When
// the tool has one, structuredContent is validated against it (JSON
// Schema 2020-12; external $refs are refused, never fetched) before it is
// decoded; a mismatch is a [*handler.ValidationError] and T is zero, and
// so is an outputSchema that does not compile, is larger than 64 KiB,
// nests objects and arrays more than 64 deep or has a number with more
// than 1000 digits or an exponent past ±1000, or whose $ref, allOf,
// anyOf, oneOf, not, if, then, else or dependentSchemas lead from a
// subschema back to itself (the tool is then not called); so is such a
// number in structuredContent that is to be validated (the validator's
// time grows with them), and a structuredContent whose validation would
// evaluate the schema's subschemas more than about four million times
// plus 128 times per JSON value, an entry of an enum or const counting
// as one evaluation and a pattern's match as its string's length times
// its program's size over 128 (subschemas that fork and join again
// multiply: 2 KB of them can take years). Without an
// outputSchema the value is decoded unchecked. A result without
// structuredContent falls back to a single text block holding JSON (what
// older servers send).
//
// When the tool reports an error (res.Failed()) the result is returned
// with an [*Error] of kind [KindServer]. A tool missing from the list is an
// [*Error] of kind [KindInvalid] naming it (the tool is not called). Other
// errors are those of [Client.CallTool].
func CallToolAs[T any](ctx context.Context, c *Client, name string, args any, opts ...CallOption) (T, *protocol.CallToolResult, error) {
	v, res, err := callToolAs[T](ctx, c, name, args, opts)
	return v, res, opError(protocol.MethodToolsCall, err)
}

func callToolAs[T any](ctx context.Context, c *Client, name string, args any, opts []CallOption) (T, *protocol.CallToolResult, error) {
	var zero T
	info, err := c.toolInfo(ctx, name, false)
	if err != nil {
		return zero, nil, err
	}
	if info == nil {
		return zero, nil, newError(protocol.MethodToolsCall, KindInvalid, "unknown tool %q: not in the server's tools list", name)
	}
	schema, graph, err := info.outputSchema()
	if err != nil {
		return zero, nil, &handler.ValidationError{Subject: fmt.Sprintf("tool %q outputSchema", name), Problems: []string{"cannot compile the schema"}, Err: err}
	}
	res, err := c.CallTool(ctx, name, args, opts...)
	if err != nil {
		return zero, nil, err
	}
	if res.Failed() {
		return zero, res, &Error{Op: protocol.MethodToolsCall, Kind: KindServer,
			Err: fmt.Errorf("tool %q reported an error: %s", name, textcut.Cut(res.Text(), 200))}
	}
	subject := fmt.Sprintf("tool %q structuredContent", name)
	raw := bytes.TrimSpace(res.StructuredContent)
	if len(raw) == 0 {
		if len(res.Content) == 1 && res.Content[0].Type == protocol.ContentText && json.Valid([]byte(res.Content[0].Text)) {
			raw = []byte(res.Content[0].Text)
		} else {
			return zero, res, &handler.ValidationError{Subject: subject, Problems: []string{"result has no structuredContent"}}
		}
	}
	if schema != nil {
		if lit, ok := hugeNumber(raw); ok {
			return zero, res, &handler.ValidationError{Subject: subject,
				Problems: []string{fmt.Sprintf("a number has more than %d digits or an exponent past ±%d: %s", maxNumberDigits, maxNumberExponent, lit)}}
		}
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return zero, res, &handler.ValidationError{Subject: subject, Problems: []string{"not JSON"}, Err: err}
		}
		if graph.overBudget(schema, inst) {
			return zero, res, &handler.ValidationError{Subject: subject,
				Problems: []string{fmt.Sprintf("validating it would evaluate the outputSchema's subschemas more than %d times plus %d per JSON value",
					validationWorkBase, validationWorkPerNode)}}
		}
		if err := schema.Validate(inst); err != nil {
			return zero, res, &handler.ValidationError{Subject: subject, Problems: schemaProblems(err), Err: err}
		}
	}
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return zero, res, &handler.ValidationError{Subject: subject, Problems: []string{"cannot decode into " + fmt.Sprintf("%T", v)}, Err: err}
	}
	return v, res, nil
}

// schemaProblems flattens a jsonschema validation error into one line per
// leaf cause.
func schemaProblems(err error) []string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{err.Error()}
	}
	printer := message.NewPrinter(language.English)
	var out []string
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, "/"+strings.Join(e.InstanceLocation, "/")+": "+e.ErrorKind.LocalizedString(printer))
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("and %d more", len(out)-20))
	}
	return out
}
