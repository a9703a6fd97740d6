package toolset

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Keywords with one subschema, a list of them, or a map of them, which
// the dialects that keep everything convert (to rewrite their $refs).
var (
	schemaKeywords     = []string{"not", "if", "then", "else", "contains", "propertyNames", "additionalItems", "unevaluatedItems", "unevaluatedProperties"}
	schemaListKeywords = []string{"prefixItems"}
	schemaMapKeywords  = []string{"patternProperties", "dependentSchemas"}
)

// plainKept lists, per restricted dialect, the keywords with plain values
// kept as they are; other such keywords move into the description. The
// loose dialects keep every keyword.
var plainKept = map[Dialect][]string{
	OpenAIStrict:     {"pattern", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"},
	AnthropicStrict:  {"pattern", "minItems"},
	Gemini:           {"default", "example", "minimum", "maximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "minProperties", "maxProperties", "propertyOrdering"},
	GeminiJSONSchema: {"minimum", "maximum", "minItems", "maxItems", "propertyOrdering", "prefixItems"},
}

// formats lists, per restricted dialect, the formats kept.
var formats = map[Dialect][]string{
	OpenAIStrict:     {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"},
	AnthropicStrict:  {"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"},
	Gemini:           {"date-time", "enum", "int32", "int64", "float", "double"},
	GeminiJSONSchema: {"date-time", "date", "time", "int32", "int64", "float", "double"},
}

// openAIRootRefused lists the keywords OpenAI refuses at the root of
// parameters (anyOf and oneOf there are merged first: mergeRootUnion).
var openAIRootRefused = []string{"anyOf", "oneOf", "allOf", "enum", "not"}

func (c *conv) loose() bool { return c.d == OpenAI || c.d == Anthropic }

// metadata keywords are dropped without a note: they say nothing to a
// model ($defs and definitions are reached through $ref).
var metadata = []string{"$schema", "$id", "$comment", "$anchor", "$dynamicAnchor", "$vocabulary", "$defs", "definitions", "type", "nullable"}

// object converts a schema object that is not a reference.
func (c *conv) object(n *obj, path string, depth int) *obj {
	if n.has("allOf") && c.d != Anthropic && c.d != AnthropicStrict {
		n = c.flattenAllOf(n, path)
	}
	ts, _ := typesOf(n)
	c.spend(path, len(ts))
	for _, t := range declaredTypes(n) {
		if !slices.Contains(jsonTypes, t) {
			c.loss(path+"/type", "type", "dropped "+strconv.Quote(truncateUTF8(t, 100))+": not a JSON type")
		}
	}
	out := newObj()
	var moved []string
	for _, k := range n.keys {
		if c.err != nil {
			break // the result is discarded
		}
		v := n.m[k]
		c.spend(path, len(k))
		// The path of the keyword, built only for the keywords that need
		// it: a long path built for every keyword would cost its length
		// each time.
		kp := func() string { return path + "/" + escapeToken(k) }
		switch {
		case slices.Contains(metadata, k):
		case depth == 0 && (c.d == OpenAI || c.d == OpenAIStrict) && slices.Contains(openAIRootRefused, k):
			c.move(kp(), k, v, &moved)
		case k == "description" || k == "title":
			if s, ok := v.(string); ok {
				c.spend(path, len(s))
				out.set(k, s)
			}
		case k == "properties":
			out.set(k, c.properties(v, kp(), depth))
		case k == "required":
			c.spendValue(path, v)
			out.set(k, v)
		case k == "additionalProperties":
			if o, ok := v.(*obj); ok {
				out.set(k, c.node(o, kp(), depth+1))
			} else {
				out.set(k, v)
			}
		case k == "items":
			c.items(out, v, kp(), depth)
		case k == "anyOf" || k == "oneOf" || k == "allOf":
			c.combinator(out, k, v, kp(), depth, &moved)
		case k == "enum" || k == "const":
			c.spendValue(path, v)
			c.enum(out, k, v, ts, path, &moved)
		case k == "format":
			c.format(out, v, ts, path, &moved)
		default:
			c.other(out, k, v, kp, depth, &moved)
		}
	}
	c.finishTypes(out, ts, path)
	c.finishObject(out, n, path, depth)
	c.finishArray(out, path, &moved)
	if len(moved) > 0 {
		d, _ := out.m["description"].(string)
		out.set("description", strings.TrimSpace(d+" ("+strings.Join(moved, "; ")+")"))
	}
	return ordered(out)
}

// ordered puts "type" first.
func ordered(o *obj) *obj {
	if !o.has("type") || o.keys[0] == "type" {
		return o
	}
	out := newObj()
	out.set("type", o.m["type"])
	for _, k := range o.keys {
		out.set(k, o.m[k])
	}
	return out
}

// other handles the keywords without special rules.
func (c *conv) other(out *obj, k string, v any, kp func() string, depth int, moved *[]string) {
	keep := c.loose() || slices.Contains(plainKept[c.d], k)
	switch {
	case keep && slices.Contains(schemaKeywords, k):
		out.set(k, c.node(v, kp(), depth+1))
	case keep && slices.Contains(schemaListKeywords, k):
		list, _ := v.([]any)
		conv := make([]any, len(list))
		p := kp()
		for i, x := range list {
			conv[i] = c.node(x, p+"/"+itoa(i), depth+1)
		}
		out.set(k, conv)
	case keep && slices.Contains(schemaMapKeywords, k):
		out.set(k, c.properties(v, kp(), depth))
	case keep && k == "minItems" && c.d == AnthropicStrict:
		if n, ok := v.(json.Number); ok && (n == "0" || n == "1") {
			out.set(k, v)
		} else {
			c.move(kp(), k, v, moved)
		}
	case keep:
		c.spendValue(kp(), v)
		out.set(k, v)
	default:
		c.move(kp(), k, v, moved)
	}
}

// move records a keyword the dialect cannot keep, to be written into the
// description.
func (c *conv) move(kp, k string, v any, moved *[]string) {
	m := k + ": " + compact(v)
	c.spend(kp, len(m))
	*moved = append(*moved, m)
	c.loss(kp, k, "moved into the description")
}

func (c *conv) properties(v any, kp string, depth int) *obj {
	props, ok := v.(*obj)
	out := newObj()
	if !ok {
		c.fail(kp, ErrInvalidSchema)
		return out
	}
	c.props += len(props.keys)
	for _, k := range props.keys {
		out.set(k, c.node(props.m[k], kp+"/"+escapeToken(k), depth+1))
	}
	return out
}

func (c *conv) items(out *obj, v any, kp string, depth int) {
	if list, ok := v.([]any); ok {
		// The tuple form of draft 7.
		c.loss(kp, "items", "tuple form: declared as an array of any values")
		c.strictFail(kp, "an array in tuple form")
		_ = list
		return
	}
	out.set("items", c.node(v, kp, depth+1))
}

// combinator converts anyOf, oneOf and allOf.
func (c *conv) combinator(out *obj, k string, v any, kp string, depth int, moved *[]string) {
	list, ok := v.([]any)
	if !ok {
		c.fail(kp, ErrInvalidSchema)
		return
	}
	if k == "allOf" && c.d != Anthropic && c.d != AnthropicStrict && c.d != OpenAI {
		// flattenAllOf could not merge it.
		c.strictFail(kp, "allOf that is not a set of objects")
		c.move(kp, k, v, moved)
		return
	}
	conv := make([]any, len(list))
	for i, x := range list {
		conv[i] = c.node(x, kp+"/"+itoa(i), depth+1)
	}
	if k == "oneOf" && (c.d == OpenAIStrict || c.d == AnthropicStrict || c.d == Gemini) {
		c.loss(kp, k, "read as anyOf")
		k = "anyOf"
	}
	if prev, ok := out.m[k].([]any); ok {
		conv = append(prev, conv...)
	}
	out.set(k, conv)
}

// enum converts enum and const.
func (c *conv) enum(out *obj, k string, v any, ts []string, path string, moved *[]string) {
	if c.d != Gemini && c.d != GeminiJSONSchema {
		out.set(k, v)
		return
	}
	if c.d == Gemini && len(ts) > 0 && (!slices.Contains(ts, "string") || slices.ContainsFunc(ts, func(t string) bool { return t != "string" && t != "null" })) {
		// The Schema type takes enums on strings only.
		c.move(path+"/"+k, k, v, moved)
		return
	}
	vals := []any{v}
	if k == "enum" {
		vals, _ = v.([]any)
	}
	for _, x := range vals {
		switch x.(type) {
		case string:
		case json.Number:
			if c.d == GeminiJSONSchema {
				continue
			}
			c.move(path+"/"+k, k, v, moved)
			return
		default:
			c.move(path+"/"+k, k, v, moved)
			return
		}
	}
	out.set("enum", vals)
	if c.d == Gemini {
		out.set("format", "enum")
	}
}

func (c *conv) format(out *obj, v any, ts []string, path string, moved *[]string) {
	f, _ := v.(string)
	c.spend(path, len(f))
	if c.loose() || slices.Contains(formats[c.d], f) {
		if !out.has("format") { // Gemini's "enum" format wins
			out.set("format", f)
		}
		return
	}
	c.move(path+"/format", "format", v, moved)
}

// jsonTypes are the type names of JSON Schema.
var jsonTypes = []string{"string", "number", "integer", "boolean", "array", "object", "null"}

// declaredTypes returns the names in a schema's type keyword.
func declaredTypes(n *obj) []string {
	switch t := n.m["type"].(type) {
	case string:
		return []string{t}
	case []any:
		return stringList(t)
	}
	return nil
}

// typesOf returns the JSON types a schema declares or implies, and
// whether it admits null. Names that are not JSON types are left out.
func typesOf(n *obj) (ts []string, null bool) {
	ts = slices.DeleteFunc(declaredTypes(n), func(t string) bool { return !slices.Contains(jsonTypes, t) })
	if b, _ := n.m["nullable"].(bool); b && !slices.Contains(ts, "null") && len(ts) > 0 {
		ts = append(ts, "null")
	}
	if len(ts) == 0 {
		switch {
		case n.has("properties") || n.has("additionalProperties") || n.has("required"):
			ts = []string{"object"}
		case n.has("items") || n.has("prefixItems"):
			ts = []string{"array"}
		}
	}
	return ts, slices.Contains(ts, "null")
}

func itoa(i int) string {
	const digits = "0123456789"
	if i < 10 {
		return digits[i : i+1]
	}
	return itoa(i/10) + digits[i%10:i%10+1]
}
