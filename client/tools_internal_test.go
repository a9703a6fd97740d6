package client

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/handler"
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
