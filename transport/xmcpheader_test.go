package transport_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/transport"
)

func TestEncodeHeaderValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"plain", "add", "add"},
		{"inner space", "a b", "a b"},
		{"empty", "", ""},
		{"uri", "file:///tmp/x.txt", "file:///tmp/x.txt"},
		{"non-ASCII", "ü", "=?base64?w7w=?="},
		{"leading space", " a", "=?base64?IGE=?="},
		{"trailing space", "a ", "=?base64?YSA=?="},
		{"tab", "a\tb", "=?base64?YQli?="},
		{"newline", "a\nb", "=?base64?YQpi?="},
		{"CR", "a\rb", "=?base64?YQ1i?="},
		{"DEL", "a\x7fb", "=?base64?YX9i?="},
		{"looks encoded", "=?base64?YQ==?=", "=?base64?PT9iYXNlNjQ/WVE9PT89?="},
		{"looks encoded upper", "=?BASE64?YQ==?=", "=?base64?PT9CQVNFNjQ/WVE9PT89?="},
		{"not quite encoded", "=?base64?", "=?base64?"},
		{"int", 42, "42"},
		{"negative int64", int64(-7), "-7"},
		{"uint8", uint8(9), "9"},
		{"integral float", 42.0, "42"},
		{"max safe", int64(1<<53 - 1), "9007199254740991"},
		{"min safe", -(int64(1<<53 - 1)), "-9007199254740991"},
		{"json number", json.Number("12"), "12"},
		{"json number float form", json.Number("12.0"), "12"},
		{"true", true, "true"},
		{"false", false, "false"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transport.EncodeHeaderValue(tt.in)
			if err != nil {
				t.Fatalf("EncodeHeaderValue(%#v): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("EncodeHeaderValue(%#v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEncodeHeaderValueErrors(t *testing.T) {
	tests := []struct {
		name string
		in   any
	}{
		{"nil", nil},
		{"fraction", 1.5},
		{"too big", int64(1 << 53)},
		{"too small", -(int64(1 << 53))},
		{"too big uint", uint64(1 << 60)},
		{"too big float", 1e300},
		{"json fraction", json.Number("1.25")},
		{"object", map[string]any{"a": 1}},
		{"array", []any{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := transport.EncodeHeaderValue(tt.in)
			var hv *transport.HeaderValueError
			if !errors.As(err, &hv) {
				t.Fatalf("EncodeHeaderValue(%#v) error = %v, want *HeaderValueError", tt.in, err)
			}
		})
	}
}

func TestValidateToolHeadersRejects(t *testing.T) {
	tests := []struct {
		name   string
		schema string
	}{
		{"empty name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":""}}}`},
		{"not a string", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":5}}}`},
		{"space in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"My Header"}}}`},
		{"colon in name", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A:B"}}}`},
		{"control char", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"A\u0001"}}}`},
		{"non-ASCII", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Régión"}}}`},
		{"duplicate case-insensitive", `{"type":"object","properties":{"a":{"type":"string","x-mcp-header":"Region"},"b":{"type":"string","x-mcp-header":"REGION"}}}`},
		{"number type", `{"type":"object","properties":{"a":{"type":"number","x-mcp-header":"A"}}}`},
		{"object type", `{"type":"object","properties":{"a":{"type":"object","x-mcp-header":"A"}}}`},
		{"array type", `{"type":"object","properties":{"a":{"type":"array","x-mcp-header":"A"}}}`},
		{"no type", `{"type":"object","properties":{"a":{"x-mcp-header":"A"}}}`},
		{"two-type union", `{"type":"object","properties":{"a":{"type":["string","integer"],"x-mcp-header":"A"}}}`},
		{"null only", `{"type":"object","properties":{"a":{"type":["null"],"x-mcp-header":"A"}}}`},
		{"on the root", `{"type":"string","x-mcp-header":"A"}`},
		{"through items", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"string","x-mcp-header":"A"}}}}`},
		{"through items array", `{"type":"object","properties":{"a":{"type":"array","items":[{"type":"string","x-mcp-header":"A"}]}}}`},
		{"through prefixItems", `{"type":"object","properties":{"a":{"type":"array","prefixItems":[{"type":"string","x-mcp-header":"A"}]}}}`},
		{"through oneOf", `{"type":"object","oneOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`},
		{"through anyOf", `{"type":"object","properties":{"a":{"anyOf":[{"type":"string","x-mcp-header":"A"}]}}}`},
		{"through allOf", `{"type":"object","allOf":[{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}]}`},
		{"through not", `{"type":"object","properties":{"a":{"not":{"type":"string","x-mcp-header":"A"}}}}`},
		{"through if", `{"type":"object","if":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`},
		{"through then", `{"type":"object","then":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`},
		{"through else", `{"type":"object","else":{"properties":{"a":{"type":"string","x-mcp-header":"A"}}}}`},
		{"through $ref target", `{"type":"object","properties":{"a":{"$ref":"#/$defs/r"}},"$defs":{"r":{"type":"string","x-mcp-header":"A"}}}`},
		{"through definitions", `{"type":"object","definitions":{"r":{"type":"string","x-mcp-header":"A"}}}`},
		{"through additionalProperties", `{"type":"object","additionalProperties":{"type":"string","x-mcp-header":"A"}}`},
		{"through patternProperties", `{"type":"object","patternProperties":{"^a":{"type":"string","x-mcp-header":"A"}}}`},
		{"invalid JSON", `{"type":`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transport.ValidateToolHeaders(json.RawMessage(tt.schema))
			var the *transport.ToolHeaderError
			if !errors.As(err, &the) {
				t.Fatalf("ValidateToolHeaders = %v, %v; want *ToolHeaderError", got, err)
			}
			if the.Reason == "" {
				t.Error("error has no reason")
			}
		})
	}
}

func TestValidateToolHeadersAccepts(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		want   []transport.ParamHeader
	}{
		{"none", `{"type":"object","properties":{"a":{"type":"string"}}}`, nil},
		{"empty schema", ``, nil},
		{"string", `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}`,
			[]transport.ParamHeader{{Name: "Region", Path: []string{"region"}}}},
		{"integer and boolean", `{"type":"object","properties":{"n":{"type":"integer","x-mcp-header":"N"},"b":{"type":"boolean","x-mcp-header":"B-Flag"}}}`,
			[]transport.ParamHeader{{Name: "B-Flag", Path: []string{"b"}}, {Name: "N", Path: []string{"n"}}}},
		{"nullable", `{"type":"object","properties":{"n":{"type":["integer","null"],"x-mcp-header":"N"}}}`,
			[]transport.ParamHeader{{Name: "N", Path: []string{"n"}}}},
		{"nested properties", `{"type":"object","properties":{"opts":{"type":"object","properties":{"tenant":{"type":"string","x-mcp-header":"Tenant"}}}}}`,
			[]transport.ParamHeader{{Name: "Tenant", Path: []string{"opts", "tenant"}}}},
		{"token punctuation", "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"x-mcp-header\":\"a!#$%&'*+-.^_`|~9\"}}}",
			[]transport.ParamHeader{{Name: "a!#$%&'*+-.^_`|~9", Path: []string{"a"}}}},
		{"property named x-mcp-header", `{"type":"object","properties":{"x-mcp-header":{"type":"string"}}}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transport.ValidateToolHeaders(json.RawMessage(tt.schema))
			if err != nil {
				t.Fatalf("ValidateToolHeaders: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParamHeaders(t *testing.T) {
	params := []transport.ParamHeader{
		{Name: "Region", Path: []string{"region"}},
		{Name: "Count", Path: []string{"count"}},
		{Name: "Dry", Path: []string{"dry"}},
		{Name: "Tenant", Path: []string{"opts", "tenant"}},
	}
	tests := []struct {
		name string
		args string
		want http.Header
	}{
		{"all", `{"region":"eu west","count":3.0,"dry":false,"opts":{"tenant":"ü"}}`, http.Header{
			"Mcp-Param-Region": {"eu west"}, "Mcp-Param-Count": {"3"}, "Mcp-Param-Dry": {"false"}, "Mcp-Param-Tenant": {"=?base64?w7w=?="}}},
		{"absent and null omitted", `{"region":null,"opts":{}}`, http.Header{}},
		{"path through non-object", `{"opts":"x"}`, http.Header{}},
		{"no arguments", ``, http.Header{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := transport.ParamHeaders(params, json.RawMessage(tt.args))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{`{"count":9007199254740992}`, `{"count":1.5}`, `{"region":{"a":1}}`, `[1]`, `{`} {
		if h, err := transport.ParamHeaders(params, json.RawMessage(bad)); err == nil {
			t.Errorf("ParamHeaders(%s) = %v, want an error", bad, h)
		}
	}
}

// TestValidateToolHeadersCostLinear: what ValidateToolHeaders allocates
// for a server's schema is bounded by the schema's size, whatever its
// shape. The walk used to decode every subschema again at each level
// above it, copying it each time: 127 levels over 1 MiB allocated a
// quarter of a GiB (and over the 16 MiB a message may hold, half a minute
// of CPU per tools/list); decoding the whole schema instead built every
// array element and every empty subschema.
func TestValidateToolHeadersCostLinear(t *testing.T) {
	const head = `{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"H"}}`
	deep := func() string {
		const depth = 127
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{"h":{"type":"string","x-mcp-header":"H"}`)
		for range depth - 1 {
			b.WriteString(`,"a":{"type":"object","properties":{"z":{"type":"string"}`)
		}
		b.WriteString(`,"d":{"description":"` + strings.Repeat("x", 1<<20) + `"}`)
		for range depth - 1 {
			b.WriteString(`}}`)
		}
		b.WriteString(`}}`)
		return b.String()
	}
	tests := []struct {
		name   string
		schema string
	}{
		{"nested as deep as allowed", deep()},
		{"a large array", head + `,"enum":[` + strings.Repeat("1,", 1<<19) + `1]}`},
		{"many empty subschemas", head + `,"allOf":[` + strings.Repeat("{},", 1<<18) + `{}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			schema := json.RawMessage(tt.schema)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := transport.ValidateToolHeaders(schema)
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatalf("ValidateToolHeaders = %v", err)
			}
			want := []transport.ParamHeader{{Name: "H", Path: []string{"h"}}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("ValidateToolHeaders (-want +got):\n%s", diff)
			}
			if alloc, bound := after.TotalAlloc-before.TotalAlloc, 4*uint64(len(schema)); alloc > bound {
				t.Errorf("ValidateToolHeaders of a %d-byte schema allocated %d bytes, want at most %d", len(schema), alloc, bound)
			}
		})
	}
}
