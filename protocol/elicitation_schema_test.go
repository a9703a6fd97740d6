package protocol_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

func TestParsePrimitiveSchema(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want protocol.PrimitiveSchema
	}{
		{"string 2025-06-18", `{"type":"string","format":"email","minLength":1}`,
			&protocol.StringSchema{Type: "string", Format: "email", MinLength: intp(1)}},
		{"integer", `{"type":"integer","minimum":1,"maximum":5,"default":3}`,
			&protocol.NumberSchema{Type: "integer", Minimum: float64p(1), Maximum: float64p(5), Default: float64p(3)}},
		{"number", `{"type":"number"}`, &protocol.NumberSchema{Type: "number"}},
		{"boolean", `{"type":"boolean","default":true}`, &protocol.BooleanSchema{Type: "boolean", Default: protocol.Bool(true)}},
		{"enum 2025-06-18 untitled", `{"type":"string","enum":["a","b"]}`,
			&protocol.UntitledSingleSelectEnumSchema{Type: "string", Enum: []string{"a", "b"}}},
		{"enum 2025-06-18 enumNames", `{"type":"string","enum":["a","b"],"enumNames":["A","B"]}`,
			&protocol.LegacyTitledEnumSchema{Type: "string", Enum: []string{"a", "b"}, EnumNames: []string{"A", "B"}}},
		{"titled single select", `{"type":"string","oneOf":[{"const":"a","title":"A"}],"default":"a"}`,
			&protocol.TitledSingleSelectEnumSchema{Type: "string", OneOf: []protocol.EnumOption{{Const: "a", Title: "A"}}, Default: strp("a")}},
		{"untitled multi select", `{"type":"array","items":{"type":"string","enum":["a"]},"maxItems":1}`,
			&protocol.UntitledMultiSelectEnumSchema{Type: "array", Items: protocol.UntitledEnumItems{Type: "string", Enum: []string{"a"}}, MaxItems: intp(1)}},
		{"titled multi select", `{"type":"array","items":{"anyOf":[{"const":"a","title":"A"}]},"default":["a"]}`,
			&protocol.TitledMultiSelectEnumSchema{Type: "array", Items: protocol.TitledEnumItems{AnyOf: []protocol.EnumOption{{Const: "a", Title: "A"}}}, Default: []string{"a"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := protocol.ParsePrimitiveSchema(json.RawMessage(tc.in))
			if err != nil {
				t.Fatalf("ParsePrimitiveSchema(%s): %v", tc.in, err)
			}
			if reflect.TypeOf(got) != reflect.TypeOf(tc.want) {
				t.Fatalf("ParsePrimitiveSchema(%s) = %T, want %T", tc.in, got, tc.want)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("ParsePrimitiveSchema(%s) (-want +got):\n%s", tc.in, d)
			}
		})
	}
}

func TestParsePrimitiveSchemaErrors(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"type":"object"}`,
		`{"type":"array"}`,
		`{"type":"array","items":{"type":"string"}}`,
		`{"type":"string","minLength":"x"}`,
		`{"type":"boolean","default":"yes"}`,
		`{"type":7}`,
		`[]`,
		`nope`,
	} {
		_, err := protocol.ParsePrimitiveSchema(json.RawMessage(in))
		if !errors.Is(err, protocol.ErrInvalidSchema) {
			t.Errorf("ParsePrimitiveSchema(%s) error = %v, want ErrInvalidSchema", in, err)
		}
	}
}

func TestParseRequestedSchema(t *testing.T) {
	in := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{
		"zeta":{"type":"string"},
		"alpha":{"type":"boolean"},
		"mid":{"type":"array","items":{"type":"string","enum":["x"]}}
	},"required":["zeta"]}`
	s, err := protocol.ParseRequestedSchema(json.RawMessage(in))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range s.Properties {
		names = append(names, p.Name)
	}
	if d := cmp.Diff([]string{"zeta", "alpha", "mid"}, names); d != "" {
		t.Errorf("property order (-want +got):\n%s", d)
	}
	if !s.IsRequired("zeta") || s.IsRequired("alpha") {
		t.Errorf("IsRequired wrong for %v", s.Required)
	}
	if p, ok := s.Property("alpha"); !ok {
		t.Error(`Property("alpha") not found`)
	} else if _, isBool := p.(*protocol.BooleanSchema); !isBool {
		t.Errorf(`Property("alpha") = %T, want *BooleanSchema`, p)
	}
	if _, ok := s.Property("nope"); ok {
		t.Error(`Property("nope") found`)
	}
	if s.Schema != "https://json-schema.org/draft/2020-12/schema" {
		t.Errorf("Schema = %q", s.Schema)
	}
}

func TestParseRequestedSchemaErrors(t *testing.T) {
	for _, in := range []string{
		`{"type":"string"}`,
		`{"properties":{}}`,
		`{"type":"object"}`,
		`{"type":"object","properties":[]}`,
		`{"type":"object","properties":{"a":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"type":"string"},"a":{"type":"string"}}}`,
		`[]`,
	} {
		_, err := protocol.ParseRequestedSchema(json.RawMessage(in))
		if !errors.Is(err, protocol.ErrInvalidSchema) {
			t.Errorf("ParseRequestedSchema(%s) error = %v, want ErrInvalidSchema", in, err)
		}
	}
}
