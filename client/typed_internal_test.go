package client

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestCompileSchemaNeverFetches(t *testing.T) {
	tests := []struct {
		name    string
		schema  string
		wantErr error
	}{
		{"2020-12 metaschema is built in", `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object"}`, nil},
		{"draft-07 metaschema is built in", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`, nil},
		{"local ref", `{"$defs":{"n":{"type":"number"}},"properties":{"a":{"$ref":"#/$defs/n"}}}`, nil},
		{"http ref refused", `{"$ref":"http://example.com/schema.json"}`, errRemoteRef},
		{"https ref refused", `{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`, errRemoteRef},
		{"file ref refused", `{"$ref":"file:///etc/passwd"}`, errRemoteRef},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileSchema("t", json.RawMessage(tt.schema))
			if tt.wantErr == nil && err != nil {
				t.Fatalf("compileSchema(%s) = %v, want success", tt.schema, err)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Fatalf("compileSchema(%s) = %v, want %v", tt.schema, err, tt.wantErr)
			}
		})
	}
}

// TestJSONDeeper: brackets inside strings, escaped quotes included, do
// not count as nesting.
func TestJSONDeeper(t *testing.T) {
	for _, tt := range []struct {
		text  string
		limit int
		want  bool
	}{
		{`{}`, 1, false},
		{`{"a":[]}`, 1, true},
		{`{"a":[]}`, 2, false},
		{`{"a":"[[[{{{"}`, 1, false},
		{`{"a\"[[":"\\","b":"\"{{"}`, 1, false},
		{`[[[]]]`, 2, true},
	} {
		if got := jsonDeeper([]byte(tt.text), tt.limit); got != tt.want {
			t.Errorf("jsonDeeper(%s, %d) = %v, want %v", tt.text, tt.limit, got, tt.want)
		}
	}
}

// TestHugeNumber: numbers past the digits or exponent bound are found,
// the JSON text's strings are skipped, and numbers of ordinary size
// (float64's range, a thousand digits) pass.
func TestHugeNumber(t *testing.T) {
	for _, tt := range []struct {
		text string
		want string // the literal reported; "" for none
	}{
		{`{"a":1,"b":-2.5e-3,"c":[0,1E+308,-1e-324]}`, ""},
		{`[` + strings.Repeat("9", 1000) + `,1e1000,1e-1000,-0.` + strings.Repeat("0", 998) + `1]`, ""},
		{`{"a":"1e999999","b\"1e999999":"\\"}`, ""},
		{`[1,2e00000000000000000000000000005]`, ""},
		{`{"a":1e1001}`, "1e1001"},
		{`{"a":[1,-1E-1001]}`, "-1E-1001"},
		{`[1e+99999999999999999999999999999]`, "1e+99999999999999999999999999999"},
		{`[` + strings.Repeat("7", 1001) + `]`, strings.Repeat("7", 40) + "…"},
		{`["\"",1e1000001]`, "1e1000001"},
	} {
		got, ok := hugeNumber([]byte(tt.text))
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("hugeNumber(%.60s) = %q, %v; want %q, %v", tt.text, got, ok, tt.want, tt.want != "")
		}
	}
}
