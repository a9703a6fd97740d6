package toolsettest

import (
	"slices"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/toolset"
)

func (c *checker) openAI() bool { return c.d == toolset.OpenAI || c.d == toolset.OpenAIStrict }

// schema checks one schema node.
func (c *checker) schema(v any, path string, depth int) {
	if b, ok := v.(bool); ok {
		if c.strict || c.d == toolset.Gemini {
			c.errorf(path, "a boolean schema (%v)", b)
		}
		return
	}
	s, ok := v.(map[string]any)
	if !ok {
		c.errorf(path, "is not a schema")
		return
	}
	if allowed := c.allowedKeys(); allowed != nil {
		for k := range s {
			if !slices.Contains(allowed, k) {
				c.errorf(path, "keyword %s is not supported", k)
			}
		}
	}
	if _, ok := s["$schema"]; ok && c.d == toolset.GeminiJSONSchema {
		c.errorf(path, "has $schema")
	}
	if ref, ok := s["$ref"].(string); ok {
		c.ref(s, ref, path, depth)
		return
	}
	if c.d == toolset.Gemini {
		c.gemini(s, path)
	} else {
		c.jsonSchema(s, path, depth)
	}
	c.children(s, path, depth)
}

func (c *checker) ref(s map[string]any, ref, path string, depth int) {
	if c.d == toolset.Gemini {
		c.errorf(path, "$ref in the Schema type")
		return
	}
	if c.strict && c.d == toolset.AnthropicStrict {
		for k := range s {
			if k != "$ref" {
				c.errorf(path, "%s beside $ref (strict)", k)
			}
		}
	}
	target, ok := resolve(c.root, ref)
	if !ok {
		c.errorf(path, "$ref %q does not resolve in the schema", ref)
		return
	}
	if slices.Contains(c.refs, ref) {
		if c.strict && c.d == toolset.AnthropicStrict {
			c.errorf(path, "recursive $ref %q (strict)", ref)
		}
		return
	}
	c.refs = append(c.refs, ref)
	c.schema(target, ref, depth)
	c.refs = c.refs[:len(c.refs)-1]
}

func resolve(root any, ref string) (any, bool) {
	if ref == "#" {
		return root, true
	}
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	cur := root
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[tok]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func types(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

// jsonSchema checks the JSON Schema dialects' rules for one node.
func (c *checker) jsonSchema(s map[string]any, path string, depth int) {
	ts := types(s)
	props, hasProps := s["properties"].(map[string]any)
	if slices.Contains(ts, "object") {
		if c.openAI() && !hasProps {
			c.errorf(path, "object schema missing properties")
		}
		if c.strict {
			c.strictObject(s, props, hasProps, path, depth)
		}
	}
	if slices.Contains(ts, "array") {
		if _, ok := s["items"]; !ok && c.openAI() {
			c.errorf(path, "array schema missing items")
		}
		if c.strict && c.d == toolset.AnthropicStrict {
			if n, ok := s["minItems"].(float64); ok && n != 0 && n != 1 {
				c.errorf(path, "minItems %v (strict: 0 or 1)", n)
			}
		}
	}
	if c.strict && len(ts) == 0 && s["anyOf"] == nil && s["enum"] == nil && s["const"] == nil && s["allOf"] == nil {
		c.errorf(path, "a schema without a type (strict)")
	}
	if f, ok := s["format"].(string); ok {
		switch {
		case c.strict && c.openAI() && !slices.Contains(openAIFormats, f),
			c.strict && c.d == toolset.AnthropicStrict && !slices.Contains(anthropicFormats, f):
			c.errorf(path, "format %q (strict)", f)
		}
	}
}

func (c *checker) strictObject(s, props map[string]any, hasProps bool, path string, depth int) {
	ap, hasAP := s["additionalProperties"]
	if c.d == toolset.AnthropicStrict && !hasProps {
		if _, isMap := ap.(map[string]any); isMap {
			return
		}
	}
	if !hasAP || ap != false {
		c.errorf(path, "additionalProperties is not false (strict)")
	}
	if c.openAI() {
		c.props += len(props)
		if depth > 10 {
			c.errorf(path, "objects nested more than 10 deep (strict)")
		}
		if c.props > 5000 {
			c.errorf(path, "more than 5000 properties (strict)")
		}
		req := strs(s["required"])
		keys := make([]string, 0, len(props))
		for k := range props {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sort.Strings(req)
		if !slices.Equal(keys, req) {
			c.errorf(path, "required %v does not list every property %v (strict)", req, keys)
		}
	}
}

func strs(v any) []string {
	a, _ := v.([]any)
	var out []string
	for _, x := range a {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// gemini checks the Schema type's rules for one node.
func (c *checker) gemini(s map[string]any, path string) {
	t, _ := s["type"].(string)
	if _, ok := s["type"]; ok && !slices.Contains(geminiTypes, t) {
		c.errorf(path, "type %v is not one of %v", s["type"], geminiTypes)
	}
	props, _ := s["properties"].(map[string]any)
	if t == "OBJECT" && len(props) == 0 {
		c.errorf(path, "properties: should be non-empty for OBJECT type")
	}
	if _, ok := s["items"]; t == "ARRAY" && !ok {
		c.errorf(path, "items: missing field for ARRAY type")
	}
	for _, r := range strs(s["required"]) {
		if _, ok := props[r]; !ok {
			c.errorf(path, "required %q is not a property", r)
		}
	}
	for _, r := range strs(s["propertyOrdering"]) {
		if _, ok := props[r]; !ok {
			c.errorf(path, "propertyOrdering %q is not a property", r)
		}
	}
	if e, ok := s["enum"].([]any); ok && len(strs(e)) != len(e) {
		c.errorf(path, "enum has values that are not strings")
	}
	if f, ok := s["format"].(string); ok && !slices.Contains(geminiFormats[t], f) {
		c.errorf(path, "format %q for type %s", f, t)
	}
}

func (c *checker) children(s map[string]any, path string, depth int) {
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			c.schema(p, path+"/properties/"+k, depth+1)
		}
	}
	if it, ok := s["items"]; ok {
		c.schema(it, path+"/items", depth+1)
	}
	if ap, ok := s["additionalProperties"].(map[string]any); ok {
		c.schema(ap, path+"/additionalProperties", depth+1)
	}
	for _, kw := range []string{"anyOf", "oneOf", "allOf", "prefixItems"} {
		list, _ := s[kw].([]any)
		for _, x := range list {
			c.schema(x, path+"/"+kw, depth)
		}
	}
	if defs, ok := s["$defs"].(map[string]any); ok {
		for k, x := range defs {
			c.schema(x, path+"/$defs/"+k, depth)
		}
	}
}
