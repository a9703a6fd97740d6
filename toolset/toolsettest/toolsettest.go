// Package toolsettest checks tool declarations against each provider's
// documented rules, independently of the conversion in package toolset:
// tests run it on what a model endpoint received.
//
// The rules, per provider, as their documentation and SDKs state them:
//
//   - OpenAI function calling: names ^[a-zA-Z0-9_-]{1,64}$; parameters
//     an object schema at the root with no anyOf, oneOf, allOf, enum or
//     not there; every object with "properties", every array with
//     "items"; $ref local. Strict mode adds: every object has
//     additionalProperties: false and lists all its properties in
//     required; only the supported keywords (type, properties, required,
//     additionalProperties, items, enum, const, anyOf, $ref, $defs,
//     definitions, description, title, pattern, format, multipleOf,
//     maximum, exclusiveMaximum, minimum, exclusiveMinimum, minItems,
//     maxItems) and formats (date-time, time, date, duration, email,
//     hostname, ipv4, ipv6, uuid); at most 10 levels of nested objects
//     and 5000 properties.
//   - Anthropic messages: names ^[a-zA-Z0-9_-]{1,64}$; input_schema an
//     object schema at the root; $ref local. Strict tools add: the
//     supported keywords ($ref, $defs, type, anyOf, oneOf, allOf,
//     description, title, enum, const, properties, additionalProperties,
//     required, items, minItems, format, pattern), $ref without
//     siblings, objects with properties have additionalProperties: false,
//     minItems 0 or 1, formats date-time, time, date, duration, email,
//     hostname, uri, ipv4, ipv6, uuid, no recursive references.
//   - Gemini generateContent, parameters (the Schema type): names start
//     with a letter or "_" and hold letters, digits, "_", ".", ":" and
//     "-", at most 128; only the Schema type's fields; types STRING,
//     NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT, NULL; an OBJECT has
//     non-empty properties, an ARRAY has items; required and
//     propertyOrdering name existing properties; enums are strings;
//     formats enum and date-time for strings, int32 and int64 for
//     integers, float and double for numbers.
//   - Gemini parametersJsonSchema: no $schema; the root an object
//     schema; only the supported keywords ($id, $defs, $ref, $anchor,
//     type, format, title, description, enum, items, prefixItems,
//     minItems, maxItems, minimum, maximum, anyOf, oneOf, properties,
//     additionalProperties, required, propertyOrdering); $ref local.
package toolsettest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/conduitmcp/conduit/toolset"
)

var (
	openAIName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)
	geminiName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_.:-]{0,127}$`)
)

// CheckName reports whether name is a valid function name for d.
func CheckName(d toolset.Dialect, name string) error {
	re := openAIName
	if d == toolset.Gemini || d == toolset.GeminiJSONSchema {
		re = geminiName
	}
	if !re.MatchString(name) {
		return fmt.Errorf("name %q does not match %s", name, re)
	}
	return nil
}

// Check reports every rule of d that the declaration breaks: its name and
// its parameters (nil parameters pass for Gemini only). strict says
// whether the declaration is sent in strict mode (OpenAI, Anthropic).
func Check(d toolset.Dialect, name string, params json.RawMessage, strict bool) error {
	var errs []string
	if err := CheckName(d, name); err != nil {
		errs = append(errs, err.Error())
	}
	if len(params) == 0 {
		if d != toolset.Gemini {
			errs = append(errs, "no parameters schema")
		}
		return joined(name, errs)
	}
	var root any
	if err := json.Unmarshal(params, &root); err != nil {
		return fmt.Errorf("%s: parameters: %v", name, err)
	}
	c := &checker{d: d, strict: strict, root: root}
	c.checkRoot()
	return joined(name, append(errs, c.errs...))
}

func joined(name string, errs []string) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", name, strings.Join(errs, "; "))
}

type checker struct {
	d      toolset.Dialect
	strict bool
	root   any
	errs   []string
	props  int
	refs   []string // references being followed (recursion)
}

func (c *checker) errorf(path, format string, args ...any) {
	if path == "" {
		path = "(root)"
	}
	c.errs = append(c.errs, path+" "+fmt.Sprintf(format, args...))
}

func (c *checker) checkRoot() {
	r, ok := c.root.(map[string]any)
	if !ok {
		c.errorf("(root)", "is not an object")
		return
	}
	switch c.d {
	case toolset.Gemini:
		if r["type"] != "OBJECT" {
			c.errorf("(root)", "type is %v, not OBJECT", r["type"])
		}
	default:
		if r["type"] != "object" {
			c.errorf("(root)", "type is %v, not object", r["type"])
		}
	}
	if c.d == toolset.OpenAI || c.d == toolset.OpenAIStrict {
		for _, k := range []string{"anyOf", "oneOf", "allOf", "enum", "not"} {
			if _, ok := r[k]; ok {
				c.errorf("(root)", "has %s at the top level", k)
			}
		}
	}
	c.schema(r, "", 0)
}

var (
	openAIStrictKeys = []string{"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "$ref", "$defs", "definitions", "description", "title", "pattern", "format", "multipleOf", "maximum", "exclusiveMaximum", "minimum", "exclusiveMinimum", "minItems", "maxItems"}
	openAIFormats    = []string{"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}

	anthropicStrictKeys = []string{"$ref", "$defs", "type", "anyOf", "oneOf", "allOf", "description", "title", "enum", "const", "properties", "additionalProperties", "required", "items", "minItems", "format", "pattern"}
	anthropicFormats    = []string{"date-time", "time", "date", "duration", "email", "hostname", "uri", "ipv4", "ipv6", "uuid"}

	geminiKeys    = []string{"anyOf", "default", "description", "enum", "example", "format", "items", "maxItems", "maxLength", "maxProperties", "maximum", "minItems", "minLength", "minProperties", "minimum", "nullable", "pattern", "properties", "propertyOrdering", "required", "title", "type"}
	geminiTypes   = []string{"STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT", "NULL"}
	geminiFormats = map[string][]string{"STRING": {"enum", "date-time"}, "INTEGER": {"int32", "int64"}, "NUMBER": {"float", "double"}}

	geminiJSONKeys = []string{"$id", "$defs", "$ref", "$anchor", "type", "format", "title", "description", "enum", "items", "prefixItems", "minItems", "maxItems", "minimum", "maximum", "anyOf", "oneOf", "properties", "additionalProperties", "required", "propertyOrdering"}
)

func (c *checker) allowedKeys() []string {
	switch {
	case c.d == toolset.Gemini:
		return geminiKeys
	case c.d == toolset.GeminiJSONSchema:
		return geminiJSONKeys
	case c.strict && (c.d == toolset.OpenAI || c.d == toolset.OpenAIStrict):
		return openAIStrictKeys
	case c.strict:
		return anthropicStrictKeys
	}
	return nil
}
