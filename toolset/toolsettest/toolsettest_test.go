package toolsettest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// TestCheckRejects: each documented rule rejects a schema that breaks it.
func TestCheckRejects(t *testing.T) {
	for _, tc := range []struct {
		d      toolset.Dialect
		strict bool
		name   string
		schema string
		want   string
	}{
		{toolset.OpenAI, false, "a.b", `{"type":"object","properties":{}}`, "does not match"},
		{toolset.OpenAI, false, "f", `{"type":"object"}`, "missing properties"},
		{toolset.OpenAI, false, "f", `{"type":"object","properties":{"l":{"type":"array"}}}`, "missing items"},
		{toolset.OpenAI, false, "f", `{"type":"object","properties":{},"anyOf":[]}`, "top level"},
		{toolset.OpenAI, false, "f", `{"type":"object","properties":{"a":{"$ref":"http://x/y"}}}`, "does not resolve"},
		{toolset.OpenAIStrict, true, "f", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, "does not list every property"},
		{toolset.OpenAIStrict, true, "f", `{"type":"object","properties":{},"additionalProperties":true}`, "additionalProperties is not false"},
		{toolset.OpenAIStrict, true, "f", `{"type":"object","properties":{"a":{"type":"string","format":"uri"}},"required":["a"],"additionalProperties":false}`, "format"},
		{toolset.OpenAIStrict, true, "f", `{"type":"object","properties":{"a":{"oneOf":[]}},"required":["a"],"additionalProperties":false}`, "oneOf is not supported"},
		{toolset.AnthropicStrict, true, "f", `{"type":"object","properties":{"a":{"$ref":"#","description":"x"}},"additionalProperties":false}`, "beside $ref"},
		{toolset.AnthropicStrict, true, "f", `{"type":"object","properties":{"a":{"type":"integer","minimum":1}},"additionalProperties":false}`, "minimum is not supported"},
		{toolset.Anthropic, false, "f", `{"type":"string"}`, "not object"},
		{toolset.Gemini, false, "1f", `{"type":"OBJECT","properties":{"a":{"type":"STRING"}}}`, "does not match"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"OBJECT"}}}`, "non-empty"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"string"}}}`, "type string"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"INTEGER","enum":[1]}}}`, "not strings"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"STRING","format":"uri"}}}`, "format"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"required":["b"]}`, "not a property"},
		{toolset.Gemini, false, "f", `{"type":"OBJECT","properties":{"a":{"type":"STRING"}},"additionalProperties":false}`, "not supported"},
		{toolset.GeminiJSONSchema, false, "f", `{"$schema":"x","type":"object","properties":{}}`, "$schema"},
	} {
		err := toolsettest.Check(tc.d, tc.name, json.RawMessage(tc.schema), tc.strict)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %s: %v, want %q", tc.d, tc.schema, err, tc.want)
		}
	}
}
