package handler

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// ValidationError reports a value that does not match its schema: a tool's
// structuredContent against its outputSchema (client.CallToolAs), tool
// arguments that are not a JSON object, or an elicitation answer against
// the requested schema. In the client it reaches the caller inside a
// *client.Error of kind client.KindInvalid.
type ValidationError struct {
	// Subject names what was validated, e.g. `tool "add" structuredContent`.
	Subject string
	// Problems lists what is wrong, one entry per violation.
	Problems []string
	// Err is the underlying validator or decoding error, if any.
	Err error
}

func (e *ValidationError) Error() string {
	s := "invalid " + e.Subject
	if len(e.Problems) > 0 {
		s += ": " + strings.Join(e.Problems, "; ")
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ValidationError) Unwrap() error { return e.Err }

// elicitSchema is the requested schema of a form elicitation.
type elicitSchema struct {
	Type       string                     `json:"type"`
	Properties map[string]json.RawMessage `json:"properties"`
	Required   []string                   `json:"required"`
}

// primitiveSchema is one property of a requested schema.
type primitiveSchema struct {
	Type      string          `json:"type"`
	MinLength *int            `json:"minLength"`
	MaxLength *int            `json:"maxLength"`
	Format    string          `json:"format"`
	Enum      []any           `json:"enum"`
	OneOf     []constOption   `json:"oneOf"`
	AnyOf     []constOption   `json:"anyOf"`
	Minimum   *float64        `json:"minimum"`
	Maximum   *float64        `json:"maximum"`
	MinItems  *int            `json:"minItems"`
	MaxItems  *int            `json:"maxItems"`
	Items     *primitiveItems `json:"items"`
	Default   json.RawMessage `json:"default"`
}

type primitiveItems struct {
	Type  string        `json:"type"`
	Enum  []any         `json:"enum"`
	AnyOf []constOption `json:"anyOf"`
	OneOf []constOption `json:"oneOf"`
}

type constOption struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// ValidateElicitation checks the content of an accepted form elicitation
// against the requested schema, the MCP subset: an object whose properties
// are strings (minLength, maxLength, format email|uri|date|date-time, enum,
// oneOf of consts), numbers and integers (minimum, maximum), booleans, and
// multi-select arrays of strings (minItems, maxItems, items enum or anyOf
// of consts); "required" lists mandatory properties. Missing properties
// with a "default" get that default.
//
// It returns a new, normalized map (values as JSON decodes them: string,
// float64, bool, []any); content is not modified. A mismatch is a
// [*ValidationError] listing every problem; an unreadable schema is one
// too. An empty schema accepts only empty content.
func ValidateElicitation(schema json.RawMessage, content map[string]any) (map[string]any, error) {
	const subject = "elicitation answer"
	var s elicitSchema
	if len(bytes.TrimSpace(schema)) > 0 {
		if err := json.Unmarshal(schema, &s); err != nil {
			return nil, &ValidationError{Subject: subject, Problems: []string{"unreadable requested schema"}, Err: err}
		}
	}
	// Normalize the user's Go values into their JSON forms.
	norm := map[string]any{}
	if len(content) > 0 {
		b, err := json.Marshal(content)
		if err != nil {
			return nil, &ValidationError{Subject: subject, Problems: []string{"content is not JSON-encodable"}, Err: err}
		}
		if err := json.Unmarshal(b, &norm); err != nil {
			return nil, &ValidationError{Subject: subject, Err: err}
		}
	}
	var problems []string
	required := make(map[string]bool, len(s.Required)) // a set: the list may be long
	for _, name := range s.Required {
		required[name] = true
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var ps primitiveSchema
		if err := json.Unmarshal(s.Properties[name], &ps); err != nil {
			problems = append(problems, fmt.Sprintf("%s: unreadable property schema", name))
			continue
		}
		val, ok := norm[name]
		if (!ok || val == nil) && len(ps.Default) > 0 {
			var d any
			if json.Unmarshal(ps.Default, &d) == nil {
				norm[name] = d
				val, ok = d, true
			}
		}
		if !ok || val == nil {
			delete(norm, name)
			if required[name] {
				problems = append(problems, fmt.Sprintf("%s: required", name))
			}
			continue
		}
		problems = append(problems, checkPrimitive(name, &ps, val)...)
	}
	extra := make([]string, 0)
	for name := range norm {
		if _, ok := s.Properties[name]; !ok {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		problems = append(problems, fmt.Sprintf("%s: not in the requested schema", name))
	}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			if _, ok := norm[name]; !ok {
				problems = append(problems, fmt.Sprintf("%s: required", name))
			}
		}
	}
	if len(problems) > 0 {
		return nil, &ValidationError{Subject: subject, Problems: problems}
	}
	return norm, nil
}

func checkPrimitive(name string, ps *primitiveSchema, val any) []string {
	var p []string
	bad := func(format string, args ...any) {
		p = append(p, name+": "+fmt.Sprintf(format, args...))
	}
	switch ps.Type {
	case "string":
		s, ok := val.(string)
		if !ok {
			bad("want a string, got %s", jsonValue(val))
			return p
		}
		n := utf8.RuneCountInString(s)
		if ps.MinLength != nil && n < *ps.MinLength {
			bad("shorter than %d characters", *ps.MinLength)
		}
		if ps.MaxLength != nil && n > *ps.MaxLength {
			bad("longer than %d characters", *ps.MaxLength)
		}
		if ps.Format != "" && !validFormat(ps.Format, s) {
			bad("not a valid %s", ps.Format)
		}
		if len(ps.Enum) > 0 && !containsValue(ps.Enum, s) {
			bad("%q is not one of the allowed values", s)
		}
		if opts := slices.Concat(ps.OneOf, ps.AnyOf); len(opts) > 0 && !containsConst(opts, s) {
			bad("%q is not one of the allowed values", s)
		}
	case "number", "integer":
		f, ok := val.(float64)
		if !ok {
			bad("want %s, got %s", article(ps.Type), jsonValue(val))
			return p
		}
		if ps.Type == "integer" && (f != math.Trunc(f) || math.IsInf(f, 0)) {
			bad("want an integer, got %s", jsonValue(f))
		}
		if ps.Minimum != nil && f < *ps.Minimum {
			bad("%v is below the minimum %v", f, *ps.Minimum)
		}
		if ps.Maximum != nil && f > *ps.Maximum {
			bad("%v is above the maximum %v", f, *ps.Maximum)
		}
	case "boolean":
		if _, ok := val.(bool); !ok {
			bad("want a boolean, got %s", jsonValue(val))
		}
	case "array":
		arr, ok := val.([]any)
		if !ok {
			bad("want an array, got %s", jsonValue(val))
			return p
		}
		checkArray(ps, arr, bad)
	default:
		bad("unsupported schema type %q", ps.Type)
	}
	return p
}

// checkArray checks arr, a multi-select answer, against ps, reporting
// each problem to bad.
func checkArray(ps *primitiveSchema, arr []any, bad func(format string, args ...any)) {
	if ps.MinItems != nil && len(arr) < *ps.MinItems {
		bad("fewer than %d items", *ps.MinItems)
	}
	if ps.MaxItems != nil && len(arr) > *ps.MaxItems {
		bad("more than %d items", *ps.MaxItems)
	}
	// The allowed values as sets, made once: both the options and the
	// items may number in the hundreds of thousands.
	var enum, consts map[string]struct{}
	if ps.Items != nil {
		enum = valueSet(ps.Items.Enum)
		consts = constSet(ps.Items.AnyOf, ps.Items.OneOf)
	}
	for i, it := range arr {
		s, ok := it.(string)
		if !ok {
			bad("item %d: want a string, got %s", i, jsonValue(it))
			continue
		}
		if _, ok := enum[s]; enum != nil && !ok {
			bad("item %d: %q is not one of the allowed values", i, s)
		}
		if _, ok := consts[s]; consts != nil && !ok {
			bad("item %d: %q is not one of the allowed values", i, s)
		}
	}
}

// article is a JSON type name with its article: "an integer", "a number".
func article(typ string) string {
	switch typ {
	case "integer", "object", "array":
		return "an " + typ
	}
	return "a " + typ
}

// jsonValue names the JSON type of v, a value as encoding/json decodes it,
// with the value when it is short: "a number (2.5)", "an integer (3)",
// "a string ("x")", "a boolean (true)", "an object", "an array", "null".
func jsonValue(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case float64:
		if v == math.Trunc(v) && !math.IsInf(v, 0) {
			return fmt.Sprintf("an integer (%v)", v)
		}
		return fmt.Sprintf("a number (%v)", v)
	case string:
		if len(v) > 40 {
			return "a string"
		}
		return fmt.Sprintf("a string (%q)", v)
	case bool:
		return fmt.Sprintf("a boolean (%v)", v)
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v) // not a decoded JSON value: cannot happen
}

func containsValue(enum []any, s string) bool {
	for _, e := range enum {
		if es, ok := e.(string); ok && es == s {
			return true
		}
	}
	return false
}

// valueSet returns the strings of a non-empty enum, or nil for an empty
// one.
func valueSet(enum []any) map[string]struct{} {
	if len(enum) == 0 {
		return nil
	}
	set := make(map[string]struct{}, len(enum))
	for _, e := range enum {
		if es, ok := e.(string); ok {
			set[es] = struct{}{}
		}
	}
	return set
}

// constSet returns the string consts of the options of lists, or nil
// when they have none.
func constSet(lists ...[]constOption) map[string]struct{} {
	var set map[string]struct{}
	for _, opts := range lists {
		for _, o := range opts {
			if set == nil {
				set = make(map[string]struct{}, len(opts))
			}
			if cs, ok := o.Const.(string); ok {
				set[cs] = struct{}{}
			}
		}
	}
	return set
}

func containsConst(opts []constOption, s string) bool {
	for _, o := range opts {
		if cs, ok := o.Const.(string); ok && cs == s {
			return true
		}
	}
	return false
}

func validFormat(format, s string) bool {
	switch format {
	case "email":
		a, err := mail.ParseAddress(s)
		return err == nil && a.Address == s
	case "uri":
		u, err := url.Parse(s)
		return err == nil && u.Scheme != ""
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "date-time":
		_, err := time.Parse(time.RFC3339, s)
		return err == nil
	default:
		return true // unknown formats are annotations only
	}
}
