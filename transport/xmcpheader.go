package transport

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

// maxSafeInteger is 2^53−1, the largest integer a header value may carry.
const maxSafeInteger = 1<<53 - 1

// HeaderValueError reports a value that cannot be sent as an Mcp-Name or
// Mcp-Param-* header value.
type HeaderValueError struct {
	// Value is the offending value.
	Value any
	// Reason says why it cannot be encoded.
	Reason string
}

// Error implements the error interface.
func (e *HeaderValueError) Error() string {
	return fmt.Sprintf("transport: cannot encode header value %v: %s", e.Value, e.Reason)
}

// EncodeHeaderValue encodes v by the MCP header-value rules (2026-07-28,
// CLIENT-WIRE-REFERENCE §4.1):
//
//   - a string is sent as it is, unless it contains a byte outside visible
//     ASCII and space (control characters including TAB, DEL, non-ASCII),
//     has leading or trailing space, or itself looks like an encoded value
//     (=?base64?…?=, compared case-insensitively); then it is sent as
//     =?base64?<standard padded base64 of its UTF-8 bytes>?=;
//   - an integer (any Go integer type, an integral float64/float32, or an
//     integral [json.Number]) within ±(2^53−1) is sent in decimal;
//   - a bool is sent as true or false.
//
// Anything else, including nil, fractional numbers and integers outside
// the safe range, fails with a [*HeaderValueError].
func EncodeHeaderValue(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return encodeStringHeader(x), nil
	case bool:
		return strconv.FormatBool(x), nil
	case int:
		return encodeInt(int64(x), v)
	case int8:
		return encodeInt(int64(x), v)
	case int16:
		return encodeInt(int64(x), v)
	case int32:
		return encodeInt(int64(x), v)
	case int64:
		return encodeInt(x, v)
	case uint:
		return encodeUint(uint64(x), v)
	case uint8:
		return encodeUint(uint64(x), v)
	case uint16:
		return encodeUint(uint64(x), v)
	case uint32:
		return encodeUint(uint64(x), v)
	case uint64:
		return encodeUint(x, v)
	case float32:
		return encodeFloat(float64(x), v)
	case float64:
		return encodeFloat(x, v)
	case json.Number:
		if n, err := x.Int64(); err == nil {
			return encodeInt(n, v)
		}
		f, err := x.Float64()
		if err != nil {
			return "", &HeaderValueError{Value: v, Reason: "not a number"}
		}
		return encodeFloat(f, v)
	}
	return "", &HeaderValueError{Value: v, Reason: fmt.Sprintf("type %T is not a string, integer or boolean", v)}
}

// encodeStringHeader encodes s by the rules of [EncodeHeaderValue].
func encodeStringHeader(s string) string {
	if needsBase64(s) {
		return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
	}
	return s
}

func encodeInt(n int64, v any) (string, error) {
	if n > maxSafeInteger || n < -maxSafeInteger {
		return "", &HeaderValueError{Value: v, Reason: "integer outside ±(2^53−1)"}
	}
	return strconv.FormatInt(n, 10), nil
}

func encodeUint(n uint64, v any) (string, error) {
	if n > maxSafeInteger {
		return "", &HeaderValueError{Value: v, Reason: "integer outside ±(2^53−1)"}
	}
	return strconv.FormatUint(n, 10), nil
}

func encodeFloat(f float64, v any) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) || f != math.Trunc(f) {
		return "", &HeaderValueError{Value: v, Reason: "not an integer"}
	}
	if math.Abs(f) > maxSafeInteger {
		return "", &HeaderValueError{Value: v, Reason: "integer outside ±(2^53−1)"}
	}
	return strconv.FormatInt(int64(f), 10), nil
}

// needsBase64 reports whether s cannot be sent as a plain header value.
// TAB counts as a control character (OPEN-QUESTIONS 14).
func needsBase64(s string) bool {
	if s == "" {
		return false
	}
	if s[0] == ' ' || s[len(s)-1] == ' ' {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e {
			return true
		}
	}
	return len(s) >= len("=?base64??=") &&
		strings.EqualFold(s[:len("=?base64?")], "=?base64?") &&
		strings.HasSuffix(s, "?=")
}

// ParamHeader is one x-mcp-header annotation of a tool's input schema.
type ParamHeader struct {
	// Name is the annotation value; the header is Mcp-Param-{Name}.
	Name string
	// Path is the chain of property names from the schema root to the
	// annotated property.
	Path []string
}

// ToolHeaderError explains why a tool's x-mcp-header annotations are
// invalid. Such a tool must be dropped from tools/list on HTTP
// (CLIENT-WIRE-REFERENCE §4.1).
type ToolHeaderError struct {
	// Name is the annotation value concerned, when there is one.
	Name string
	// Path is the location of the offending schema: JSON keys from the root.
	Path []string
	// Reason says which rule was broken.
	Reason string
}

// Error implements the error interface.
func (e *ToolHeaderError) Error() string {
	s := "transport: invalid x-mcp-header"
	if e.Name != "" {
		s += " " + strconv.Quote(e.Name)
	}
	if len(e.Path) > 0 {
		s += " at /" + strings.Join(e.Path, "/")
	}
	return s + ": " + e.Reason
}

// maxSchemaDepth bounds the recursion into a peer-supplied schema.
const maxSchemaDepth = 128

// Schema keywords whose values are a single subschema, a map of
// subschemas, or an array of subschemas. An annotation found below any of
// them is not reachable through properties alone.
var (
	schemaValueKeywords = []string{"additionalProperties", "unevaluatedProperties", "items", "additionalItems",
		"unevaluatedItems", "contains", "propertyNames", "not", "if", "then", "else", "contentSchema"}
	schemaMapKeywords   = []string{"patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
	schemaArrayKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
)

// ValidateToolHeaders returns the x-mcp-header annotations of a tool's
// input schema, ordered by path, or a [*ToolHeaderError] naming the first
// rule broken: the value must be a non-empty RFC 9110 token, unique
// case-insensitively within the schema, on a property whose type is
// string, integer or boolean (a type array whose non-null members are
// exactly one of those is accepted), reached from the root through a chain
// of "properties" keys alone (not through items, oneOf/anyOf/allOf, not,
// if/then/else, $ref targets or any other keyword). A schema that is not
// JSON also fails. A nil or empty schema has no annotations.
//
// A schema that spells x-mcp-header nowhere, not even through a \u
// escape, has no annotations: it is only checked to be JSON, without
// allocating, and its structure is not inspected. Any other schema is
// read once (see schemaParser), so the cost is linear in its size however
// deep it nests.
func ValidateToolHeaders(inputSchema json.RawMessage) ([]ParamHeader, error) {
	trimmed := bytes.TrimSpace(inputSchema)
	if len(trimmed) == 0 {
		return nil, nil
	}
	if !bytes.Contains(inputSchema, []byte("x-mcp-header")) && !bytes.Contains(inputSchema, []byte(`\u`)) {
		if !json.Valid(inputSchema) {
			return nil, &ToolHeaderError{Reason: "schema is not valid JSON"}
		}
		return nil, nil
	}
	if !json.Valid(trimmed) {
		if trimmed[0] == '{' {
			return nil, &ToolHeaderError{Reason: "schema is not a valid JSON object"}
		}
		return nil, &ToolHeaderError{Reason: "schema is not valid JSON"}
	}
	if trimmed[0] != '{' {
		return nil, nil // boolean schemas and stray values carry no annotations
	}
	p := schemaParser{data: trimmed}
	root, _ := p.object(0, 0)
	if root == nil {
		return nil, nil
	}
	v := &headerValidator{seen: map[string]bool{}}
	if err := v.walk(root, nil, nil, true); err != nil {
		return nil, err
	}
	slices.SortFunc(v.found, func(a, b ParamHeader) int { return slices.Compare(a.Path, b.Path) })
	return v.found, nil
}

type headerValidator struct {
	seen  map[string]bool // lower-cased names already found
	found []ParamHeader
}

// walk visits the schema at loc: its annotation, then its children in
// slot order. props is the property path when direct (reached through
// properties alone).
func (v *headerValidator) walk(n *schemaNode, loc, props []string, direct bool) error {
	if n.tooDeep {
		return &ToolHeaderError{Path: loc, Reason: "schema nested too deeply"}
	}
	if n.hasAnn {
		if err := v.annotation(n, loc, props, direct); err != nil {
			return err
		}
	}
	sub := func(key string) []string { return append(slices.Clip(loc), key) }
	if n.propsBad {
		return &ToolHeaderError{Path: sub("properties"), Reason: "not an object of schemas"}
	}
	for _, k := range n.kids {
		var err error
		switch {
		case k.slot == 0:
			err = v.walk(k.node, append(sub("properties"), k.key), append(slices.Clip(props), k.key), direct)
		case k.slot < slotValue:
			err = v.walk(k.node, append(sub(schemaMapKeywords[k.slot-slotMap]), k.key), nil, false)
		case k.slot < slotArray:
			err = v.walk(k.node, sub(schemaValueKeywords[k.slot-slotValue]), nil, false)
		default:
			err = v.walk(k.node, append(sub(schemaArrayKeywords[k.slot-slotArray]), strconv.Itoa(k.index)), nil, false)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (v *headerValidator) annotation(n *schemaNode, loc, props []string, direct bool) error {
	name := n.ann
	switch {
	case !n.annOK:
		return &ToolHeaderError{Path: loc, Reason: "value is not a string"}
	case name == "":
		return &ToolHeaderError{Path: loc, Reason: "empty name"}
	case !isToken(name):
		return &ToolHeaderError{Name: name, Path: loc, Reason: "name is not an RFC 9110 token"}
	case len(props) == 0:
		return &ToolHeaderError{Name: name, Path: loc, Reason: "annotation on the schema root, not on a property"}
	case !direct:
		return &ToolHeaderError{Name: name, Path: loc, Reason: "property not reachable from the root through properties alone"}
	case v.seen[strings.ToLower(name)]:
		return &ToolHeaderError{Name: name, Path: loc, Reason: "duplicate name (case-insensitive)"}
	}
	if !n.typeOK {
		return &ToolHeaderError{Name: name, Path: loc, Reason: "property type is not string, integer or boolean"}
	}
	v.seen[strings.ToLower(name)] = true
	v.found = append(v.found, ParamHeader{Name: name, Path: slices.Clone(props)})
	return nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// ParamHeaders builds the Mcp-Param-{Name} headers of a tools/call from
// the annotations found by [ValidateToolHeaders] and the call's arguments
// object. An argument that is absent or null yields no header (a path
// through a non-object counts as absent). A value that cannot be encoded
// ([EncodeHeaderValue]: objects, arrays, fractions, integers outside
// ±(2^53−1)) fails with a [*HeaderValueError]; arguments that are not a
// JSON object fail too.
func ParamHeaders(params []ParamHeader, arguments json.RawMessage) (http.Header, error) {
	h := http.Header{}
	if len(params) == 0 {
		return h, nil
	}
	arguments = bytes.TrimSpace(arguments)
	if len(arguments) == 0 || string(arguments) == "null" {
		return h, nil
	}
	var root any
	dec := json.NewDecoder(bytes.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return nil, &HeaderValueError{Value: string(arguments), Reason: "arguments are not JSON"}
	}
	if _, ok := root.(map[string]any); !ok {
		return nil, &HeaderValueError{Value: string(arguments), Reason: "arguments are not a JSON object"}
	}
	for _, p := range params {
		val, ok := lookup(root, p.Path)
		if !ok || val == nil {
			continue
		}
		s, err := EncodeHeaderValue(val)
		if err != nil {
			return nil, fmt.Errorf("header %s%s: %w", protocol.HeaderParamPrefix, p.Name, err)
		}
		h.Set(protocol.HeaderParamPrefix+p.Name, s)
	}
	return h, nil
}

func lookup(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}
