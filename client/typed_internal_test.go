package client

import (
	"encoding/json"
	"errors"
	"fmt"
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
			_, _, err := compileSchema("t", json.RawMessage(tt.schema))
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

func patterns(n int) string {
	var l []string
	for i := range n {
		l = append(l, fmt.Sprintf(`"^p%d$":true`, i))
	}
	return strings.Join(l, ",")
}

func keys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"k%d":1`, i)
	}
	return b.String()
}

// TestValidationBudget: the evaluations counted double with each fork
// that joins again, in place or across the values of the instance, and
// stay few for schemas of ordinary shape; in-place cycles are refused.
func TestValidationBudget(t *testing.T) {
	var chain []string
	for i := range 30 {
		chain = append(chain, fmt.Sprintf(`"a%d":{"oneOf":[{"$ref":"#/$defs/a%d"},{"not":{"$ref":"#/$defs/a%d"}}]}`, i, i+1, i+1))
	}
	chain = append(chain, `"a30":true`)
	for _, tt := range []struct {
		name, schema, instance string
		over                   bool
	}{
		{"forks in place", `{"$defs":{` + strings.Join(chain, ",") + `},"$ref":"#/$defs/a0"}`, `1`, true},
		{"forks across values", `{"anyOf":[{"items":{"$ref":"#"}},{"prefixItems":[{"$ref":"#"}]},{"contains":{"$ref":"#"}}]}`,
			strings.Repeat("[", 20) + strings.Repeat("]", 20), true},
		{"forks by property", `{"properties":{"a":{"$ref":"#"}},"patternProperties":{"^a":{"$ref":"#"}},"propertyNames":{"anyOf":[true,true]}}`,
			strings.Repeat(`{"a":`, 30) + "1" + strings.Repeat("}", 30), true},
		{"few forks", `{"$defs":{` + strings.Join(chain[20:], ",") + `},"$ref":"#/$defs/a20"}`, `1`, false},
		{"long enum", `{"items":{"enum":[` + strings.Repeat(`"x",`, 5000) + `"y"]}}`, "[" + strings.Repeat(`"z",`, 2000) + `"z"]`, true},
		{"many patterns", `{"patternProperties":{` + patterns(4000) + `}}`,
			`{"k":1` + keys(2000) + "}", true},
		{"costly pattern", `{"items":{"pattern":"(.*a){1000}b"}}`, `["` + strings.Repeat("a", 200<<10) + `"]`, true},
		{"cheap pattern", `{"items":{"pattern":"^[A-Za-z0-9+/]*={0,2}$"}}`, `["` + strings.Repeat("a", 8<<20) + `"]`, false},
		{"wide array", `{"items":{"oneOf":[{"type":"string"},{"type":"number"},{"type":"object"}]}}`, "[" + strings.Repeat("1,", 100000) + "1]", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sch, g, err := compileSchema("t", json.RawMessage(tt.schema))
			if err != nil {
				t.Fatalf("compileSchema = %v", err)
			}
			var inst any
			if err := json.Unmarshal([]byte(tt.instance), &inst); err != nil {
				t.Fatal(err)
			}
			if got := g.overBudget(sch, inst); got != tt.over {
				t.Errorf("overBudget = %v, want %v", got, tt.over)
			}
		})
	}
	for _, schema := range []string{
		`{"anyOf":[{"$ref":"#"}]}`,
		`{"$defs":{"a":{"allOf":[{"$ref":"#/$defs/b"}]},"b":{"if":{"$ref":"#/$defs/a"}}},"properties":{"x":{"$ref":"#/$defs/a"}}}`,
		`{"$defs":{"a":{"dependentSchemas":{"k":{"$ref":"#/$defs/a"}}}},"items":{"$ref":"#/$defs/a"}}`,
	} {
		if _, _, err := compileSchema("t", json.RawMessage(schema)); err == nil {
			t.Errorf("compileSchema(%s) = nil error, want the in-place cycle refused", schema)
		}
	}
	for _, schema := range []string{
		`{"properties":{"kids":{"items":{"$ref":"#"}}}}`,
		`{"$defs":{"v":{"anyOf":[{"additionalProperties":{"$ref":"#/$defs/v"}},{"items":{"$ref":"#/$defs/v"}}]}},"$ref":"#/$defs/v"}`,
	} {
		if _, _, err := compileSchema("t", json.RawMessage(schema)); err != nil {
			t.Errorf("compileSchema(%s) = %v, want a recursion through values accepted", schema, err)
		}
	}
}
