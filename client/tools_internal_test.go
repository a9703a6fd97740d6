package client

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

func TestMarshalArgs(t *testing.T) {
	type point struct {
		X int `json:"x"`
	}
	var nilMap map[string]any
	tests := []struct {
		name    string
		args    any
		want    string // "" for no arguments
		wantErr bool
	}{
		{"nil", nil, "", false},
		{"nil map", nilMap, "", false},
		{"nil raw", json.RawMessage(nil), "", false},
		{"empty bytes", []byte("  "), "", false},
		{"raw null", json.RawMessage(" null "), "", false},
		{"map", map[string]int{"a": 1}, `{"a":1}`, false},
		{"struct", point{X: 2}, `{"x":2}`, false},
		{"raw object", json.RawMessage(` {"a":1} `), ` {"a":1} `, false},
		{"bytes object", []byte(`{}`), `{}`, false},
		{"slice", []int{1}, "", true},
		{"string object", ` {"city":"Paris"}`, ` {"city":"Paris"}`, false},
		{"empty string", "", "", false},
		{"string null", "null", "", false},
		{"string not JSON", "x", "", true},
		{"string array", `["a"]`, "", true},
		{"string truncated", `{"city":`, "", true},
		{"number", 3, "", true},
		{"raw array", json.RawMessage(`[1]`), "", true},
		{"raw truncated", json.RawMessage(`{"a":`), "", true},
		{"raw trailing", json.RawMessage(`{"a":1}x`), "", true},
		{"raw two objects", json.RawMessage(`{}{}`), "", true},
		{"raw bad", json.RawMessage(`{a}`), "", true},
		{"unencodable", map[string]any{"f": func() {}}, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := marshalArgs(tt.args)
			if tt.wantErr {
				var ve *handler.ValidationError
				if !errors.As(err, &ve) || ve.Err == nil || len(ve.Problems) != 1 {
					t.Fatalf("marshalArgs = %s, %v; want a *handler.ValidationError with a cause", got, err)
				}
				if p := ve.Problems[0]; !strings.HasPrefix(p, "not a JSON object but ") && !strings.HasPrefix(p, "not valid JSON") &&
					p != "not JSON-encodable" {
					t.Errorf("problem %q does not say what the arguments are", p)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("marshalArgs = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestMarshalArgsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	var raw any = json.RawMessage(`{"a":1,"b":{"c":[1,2,"x"]}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := marshalArgs(raw); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("marshalArgs of a raw object: %v allocs, want 0", allocs)
	}
}

func BenchmarkMarshalArgs(b *testing.B) {
	for _, tc := range []struct {
		name string
		args any
	}{
		{"map", map[string]any{"a": 1, "b": 2}},
		{"raw", json.RawMessage(`{"a":1,"b":2}`)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := marshalArgs(tc.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestToolRegistryKeepsUnchangedEntries: a listing that says of a tool
// what the registry already knows keeps its entry (the one calls read, with
// its compiled schema) and allocates nothing; one that changes anything a
// call reads (annotations, execution, outputSchema, x-mcp-header
// annotations) replaces the entry, leaving the old one as it was for a
// call in flight.
func TestToolRegistryKeepsUnchangedEntries(t *testing.T) {
	yes, no := true, false
	tool := func(ro *bool, schema string, task string) protocol.Tool {
		t := protocol.Tool{Name: "t", Annotations: &protocol.ToolAnnotations{ReadOnlyHint: ro}}
		if schema != "" {
			t.OutputSchema = json.RawMessage(schema)
		}
		if task != "" {
			t.Execution = &protocol.ToolExecution{TaskSupport: task}
		}
		return t
	}
	headers := func(name string) []transport.ParamHeader {
		return []transport.ParamHeader{{Name: name, Path: []string{"a", "b"}}}
	}
	var r toolRegistry
	r.add(tool(&yes, `{"type":"object"}`, ""), headers("H"))
	first, _ := r.lookup("t")
	if _, _, err := first.outputSchema(); err != nil {
		t.Fatal(err)
	}
	ro := true // a new pointer to the same value
	r.add(tool(&ro, `{"type":"object"}`, ""), headers("H"))
	if got, _ := r.lookup("t"); got != first {
		t.Error("a listing that changed nothing replaced the entry")
	}
	for _, c := range []struct {
		name    string
		tool    protocol.Tool
		headers []transport.ParamHeader
	}{
		{"annotations", tool(&no, `{"type":"object"}`, ""), headers("H")},
		{"annotation dropped", tool(nil, `{"type":"object"}`, ""), headers("H")},
		{"outputSchema", tool(&yes, `{"type":"string"}`, ""), headers("H")},
		{"execution", tool(&yes, `{"type":"object"}`, protocol.TaskSupportOptional), headers("H")},
		{"headers", tool(&yes, `{"type":"object"}`, ""), headers("G")},
	} {
		var r toolRegistry
		r.add(tool(&yes, `{"type":"object"}`, ""), headers("H"))
		before, _ := r.lookup("t")
		r.add(c.tool, c.headers)
		after, _ := r.lookup("t")
		if after == before {
			t.Errorf("%s changed: the entry was kept", c.name)
		}
		if before.annotations == nil || *before.annotations.ReadOnlyHint != true || string(before.schemaRaw) != `{"type":"object"}` || before.headers[0].Name != "H" {
			t.Errorf("%s changed: the old entry changed too", c.name)
		}
	}
	if raceEnabled {
		return
	}
	same := tool(&yes, `{"type":"object"}`, "")
	h := headers("H")
	if n := testing.AllocsPerRun(100, func() { r.add(same, h) }); n != 0 {
		t.Errorf("adding an unchanged tool allocates %v times, want 0", n)
	}
}

// TestHeadersIdentityFree: a client without headers of its own names
// none, without hashing (a connect pays nothing for it); headers are
// named, the same ones the same way.
func TestHeadersIdentityFree(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = headersIdentity(nil, http.Header{}) }); n != 0 || headersIdentity(nil, nil) != "" {
		t.Errorf("headersIdentity of no headers: %v allocations, %q; want none, \"\"", n, headersIdentity(nil, nil))
	}
	a := headersIdentity(http.Header{"X-Api-Key": {"alice"}}, nil)
	if a == "" || a != headersIdentity(http.Header{"X-Api-Key": {"alice"}}, nil) || a == headersIdentity(http.Header{"X-Api-Key": {"bob"}}, nil) {
		t.Errorf("headersIdentity does not name headers by their values: %q", a)
	}
}
