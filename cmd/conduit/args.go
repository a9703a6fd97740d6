package main

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// objectSchema is the part of a tool's inputSchema that conduit reads: the
// property names in order, their JSON types and which are required.
type objectSchema struct {
	props    []schemaProp
	required map[string]bool
}

type schemaProp struct {
	name  string
	types []string // JSON Schema types; empty when not declared
}

// parseObjectSchema reads an inputSchema. A schema that is not an object
// schema yields an empty objectSchema (every value is then a string).
func parseObjectSchema(raw json.RawMessage) objectSchema {
	s := objectSchema{required: map[string]bool{}}
	var top struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if json.Unmarshal(raw, &top) != nil {
		return s
	}
	for _, r := range top.Required {
		s.required[r] = true
	}
	// Walk the properties with a decoder to keep the server's order.
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return s
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return s
		}
		name, _ := tok.(string)
		var prop struct {
			Type json.RawMessage `json:"type"`
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return s
		}
		_ = json.Unmarshal(v, &prop)
		p := schemaProp{name: name}
		var one string
		var many []string
		switch {
		case json.Unmarshal(prop.Type, &one) == nil && one != "":
			p.types = []string{one}
		case json.Unmarshal(prop.Type, &many) == nil:
			p.types = many
		}
		s.props = append(s.props, p)
	}
	return s
}

func (s objectSchema) prop(name string) (schemaProp, bool) {
	for _, p := range s.props {
		if p.name == name {
			return p, true
		}
	}
	return schemaProp{}, false
}

// summary lists the arguments for a table: "a*, b, c" where * marks the
// required ones; required arguments the schema lists without a property
// come last.
func (s objectSchema) summary() string {
	var parts []string
	seen := map[string]bool{}
	for _, p := range s.props {
		seen[p.name] = true
		n := p.name
		if s.required[p.name] {
			n += "*"
		}
		parts = append(parts, n)
	}
	var extra []string
	for r := range s.required {
		if !seen[r] {
			extra = append(extra, r+"*")
		}
	}
	sort.Strings(extra)
	return strings.Join(append(parts, extra...), ", ")
}

// needsSchema reports whether args use key=value (whose typing needs the
// tool's schema) rather than one JSON object or nothing.
func needsSchema(args []string) bool {
	if len(args) == 0 || len(args) == 1 && strings.HasPrefix(strings.TrimSpace(args[0]), "{") {
		return false
	}
	for _, a := range args {
		if k, _, ok := strings.Cut(a, "="); ok && !strings.HasSuffix(k, ":") {
			return true
		}
	}
	return false
}

// parseToolArgs turns the command-line arguments of a tool call into a
// JSON object: either one JSON object, or key=value pairs typed by the
// schema (a number, integer or boolean property gets a number or boolean,
// an object or array property parses its value as JSON, anything else is
// a string), or key:=JSON pairs whose value is taken as raw JSON.
func parseToolArgs(args []string, schema objectSchema) (json.RawMessage, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if len(args) == 1 && strings.HasPrefix(strings.TrimSpace(args[0]), "{") {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(args[0]), &obj); err != nil {
			return nil, usagef("arguments are not a JSON object: %v", err)
		}
		return json.RawMessage(args[0]), nil
	}
	obj := map[string]json.RawMessage{}
	for _, a := range args {
		key, val, raw, err := splitArg(a)
		if err != nil {
			return nil, err
		}
		if _, dup := obj[key]; dup {
			return nil, usagef("argument %q given twice", key)
		}
		var v json.RawMessage
		if raw {
			if !json.Valid([]byte(val)) {
				return nil, usagef("argument %s:=%s: the value is not valid JSON", key, val)
			}
			v = json.RawMessage(val)
		} else {
			p, _ := schema.prop(key)
			v, err = typedValue(key, val, p.types)
			if err != nil {
				return nil, err
			}
		}
		obj[key] = v
	}
	return json.Marshal(obj)
}

// splitArg splits "key=value" or "key:=json".
func splitArg(a string) (key, val string, raw bool, err error) {
	k, v, ok := strings.Cut(a, "=")
	if !ok || k == "" || k == ":" {
		return "", "", false, usagef("argument %q: want key=value, key:=JSON or a single JSON object", a)
	}
	if strings.HasSuffix(k, ":") {
		return strings.TrimSuffix(k, ":"), v, true, nil
	}
	return k, v, false, nil
}

// typedValue converts a key=value value to JSON by the property's types;
// the first type the value fits wins, and a string type always fits.
func typedValue(key, val string, types []string) (json.RawMessage, error) {
	if len(types) == 0 {
		return json.Marshal(val)
	}
	var tried []string
	for _, t := range types {
		switch t {
		case "string":
			return json.Marshal(val)
		case "integer":
			if n, err := strconv.ParseInt(val, 10, 64); err == nil {
				return json.Marshal(n)
			}
		case "number":
			// A JSON number literal is kept as written (2.50 stays 2.50).
			if _, err := strconv.ParseFloat(val, 64); err == nil && json.Valid([]byte(val)) {
				return json.RawMessage(val), nil
			}
		case "boolean":
			if b, err := strconv.ParseBool(val); err == nil {
				return json.Marshal(b)
			}
		case "null":
			if val == "null" || val == "" {
				return json.RawMessage("null"), nil
			}
		case "object", "array":
			var v any
			if json.Unmarshal([]byte(val), &v) == nil {
				if _, isObj := v.(map[string]any); isObj == (t == "object") {
					return json.RawMessage(val), nil
				}
			}
		default:
			return json.Marshal(val)
		}
		tried = append(tried, t)
	}
	return nil, usagef("argument %s=%s: the tool wants %s (use %s:=JSON to pass raw JSON)", key, val, strings.Join(tried, " or "), key)
}

// parseStringArgs parses key=value pairs into a map (prompt arguments).
func parseStringArgs(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, usagef("argument %q: want key=value", a)
		}
		if _, dup := m[k]; dup {
			return nil, usagef("argument %q given twice", k)
		}
		m[k] = v
	}
	return m, nil
}
