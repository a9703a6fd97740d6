package protocol

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidSchema is wrapped by the errors of [ParsePrimitiveSchema] and
// [ParseRequestedSchema] when a requestedSchema is not one of the shapes
// elicitation allows.
var ErrInvalidSchema = errors.New("protocol: invalid elicitation schema")

// PrimitiveSchema is one property schema of an elicitation form
// (PrimitiveSchemaDefinition). The set is closed: [*StringSchema],
// [*NumberSchema], [*BooleanSchema], [*UntitledSingleSelectEnumSchema],
// [*TitledSingleSelectEnumSchema], [*UntitledMultiSelectEnumSchema],
// [*TitledMultiSelectEnumSchema] and [*LegacyTitledEnumSchema]. Read it
// with a type switch; [ParsePrimitiveSchema] builds one from raw JSON.
//
// 2025-06-18 has string, number/integer, boolean and enum (with optional
// enumNames); 2025-11-25 and 2026-07-28 add default on every kind, the
// titled and untitled single-select and multi-select enums, and keep the
// enumNames form as LegacyTitledEnumSchema.
//
// It has no methods to call: switch on the kind, as in
//
//	switch ps := ps.(type) {
//	case *protocol.StringSchema:
//		… ps.MinLength, ps.Format …
//	case *protocol.NumberSchema:
//		… ps.Type ("number" or "integer"), ps.Minimum …
//	case *protocol.BooleanSchema:
//	case *protocol.UntitledSingleSelectEnumSchema:
//		… ps.Enum …
//	}
//
// (the example of [RequestedSchema] runs it).
type PrimitiveSchema interface {
	isPrimitiveSchema()
}

// String formats accepted by [StringSchema.Format].
const (
	FormatEmail    = "email"
	FormatURI      = "uri"
	FormatDate     = "date"
	FormatDateTime = "date-time"
)

// StringSchema is a free-text field: type "string".
type StringSchema struct {
	Type        string `json:"type"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MinLength   *int   `json:"minLength,omitempty"`
	MaxLength   *int   `json:"maxLength,omitempty"`
	// Format is "", "email", "uri", "date" or "date-time".
	Format string `json:"format,omitempty"`
	// Default is 2025-11-25 and later.
	Default *string `json:"default,omitempty"`
}

// NumberSchema is a numeric field: type "number" or "integer".
type NumberSchema struct {
	Type        string   `json:"type"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Minimum     *float64 `json:"minimum,omitempty"`
	Maximum     *float64 `json:"maximum,omitempty"`
	// Default is 2025-11-25 and later.
	Default *float64 `json:"default,omitempty"`
}

// BooleanSchema is a checkbox field: type "boolean".
type BooleanSchema struct {
	Type        string `json:"type"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Default     *bool  `json:"default,omitempty"`
}

// EnumOption is one option of a titled enum: the value sent (Const) and
// its display name (Title).
type EnumOption struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

// UntitledSingleSelectEnumSchema is a single choice among plain values:
// type "string" with enum. In 2025-06-18 this is EnumSchema without
// enumNames.
type UntitledSingleSelectEnumSchema struct {
	Type        string   `json:"type"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum"`
	Default     *string  `json:"default,omitempty"`
}

// TitledSingleSelectEnumSchema is a single choice among titled values:
// type "string" with oneOf of {const, title} (2025-11-25 and later).
type TitledSingleSelectEnumSchema struct {
	Type        string       `json:"type"`
	Title       string       `json:"title,omitempty"`
	Description string       `json:"description,omitempty"`
	OneOf       []EnumOption `json:"oneOf"`
	Default     *string      `json:"default,omitempty"`
}

// UntitledEnumItems are the items of an [UntitledMultiSelectEnumSchema]:
// type "string" with enum.
type UntitledEnumItems struct {
	Type string   `json:"type"`
	Enum []string `json:"enum"`
}

// UntitledMultiSelectEnumSchema is a multiple choice among plain values:
// type "array" whose items have enum (2025-11-25 and later).
type UntitledMultiSelectEnumSchema struct {
	Type        string            `json:"type"`
	Title       string            `json:"title,omitempty"`
	Description string            `json:"description,omitempty"`
	MinItems    *int              `json:"minItems,omitempty"`
	MaxItems    *int              `json:"maxItems,omitempty"`
	Items       UntitledEnumItems `json:"items"`
	Default     []string          `json:"default,omitempty"`
}

// TitledEnumItems are the items of a [TitledMultiSelectEnumSchema]: anyOf
// of {const, title}.
type TitledEnumItems struct {
	AnyOf []EnumOption `json:"anyOf"`
}

// TitledMultiSelectEnumSchema is a multiple choice among titled values:
// type "array" whose items have anyOf (2025-11-25 and later).
type TitledMultiSelectEnumSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MinItems    *int            `json:"minItems,omitempty"`
	MaxItems    *int            `json:"maxItems,omitempty"`
	Items       TitledEnumItems `json:"items"`
	Default     []string        `json:"default,omitempty"`
}

// LegacyTitledEnumSchema is a single choice with display names in a
// parallel enumNames array: the 2025-06-18 EnumSchema with enumNames,
// kept (deprecated) in later versions.
type LegacyTitledEnumSchema struct {
	Type        string   `json:"type"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Enum        []string `json:"enum"`
	EnumNames   []string `json:"enumNames,omitempty"`
	Default     *string  `json:"default,omitempty"`
}

func (*StringSchema) isPrimitiveSchema()                   {}
func (*NumberSchema) isPrimitiveSchema()                   {}
func (*BooleanSchema) isPrimitiveSchema()                  {}
func (*UntitledSingleSelectEnumSchema) isPrimitiveSchema() {}
func (*TitledSingleSelectEnumSchema) isPrimitiveSchema()   {}
func (*UntitledMultiSelectEnumSchema) isPrimitiveSchema()  {}
func (*TitledMultiSelectEnumSchema) isPrimitiveSchema()    {}
func (*LegacyTitledEnumSchema) isPrimitiveSchema()         {}

// ParsePrimitiveSchema decodes one property schema of an elicitation
// form, picking the kind from its members:
//
//   - type "string" with oneOf: [*TitledSingleSelectEnumSchema]
//   - type "string" with enum and enumNames: [*LegacyTitledEnumSchema]
//   - type "string" with enum: [*UntitledSingleSelectEnumSchema]
//   - type "string": [*StringSchema]
//   - type "number" or "integer": [*NumberSchema]
//   - type "boolean": [*BooleanSchema]
//   - type "array" with items.anyOf: [*TitledMultiSelectEnumSchema]
//   - type "array" with items.enum: [*UntitledMultiSelectEnumSchema]
//
// Anything else, or a member of the wrong JSON type, fails with an error
// wrapping [ErrInvalidSchema].
func ParsePrimitiveSchema(raw json.RawMessage) (PrimitiveSchema, error) {
	var probe struct {
		Type      *string         `json:"type"`
		Enum      json.RawMessage `json:"enum"`
		EnumNames json.RawMessage `json:"enumNames"`
		OneOf     json.RawMessage `json:"oneOf"`
		Items     *struct {
			AnyOf json.RawMessage `json:"anyOf"`
			Enum  json.RawMessage `json:"enum"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if probe.Type == nil {
		return nil, fmt.Errorf("%w: missing type", ErrInvalidSchema)
	}
	var s PrimitiveSchema
	switch t := *probe.Type; t {
	case "string":
		switch {
		case present(probe.OneOf):
			s = new(TitledSingleSelectEnumSchema)
		case present(probe.Enum) && present(probe.EnumNames):
			s = new(LegacyTitledEnumSchema)
		case present(probe.Enum):
			s = new(UntitledSingleSelectEnumSchema)
		default:
			s = new(StringSchema)
		}
	case "number", "integer":
		s = new(NumberSchema)
	case "boolean":
		s = new(BooleanSchema)
	case "array":
		switch {
		case probe.Items == nil:
			return nil, fmt.Errorf("%w: array without items", ErrInvalidSchema)
		case present(probe.Items.AnyOf):
			s = new(TitledMultiSelectEnumSchema)
		case present(probe.Items.Enum):
			s = new(UntitledMultiSelectEnumSchema)
		default:
			return nil, fmt.Errorf("%w: array items without enum or anyOf", ErrInvalidSchema)
		}
	default:
		return nil, fmt.Errorf("%w: unsupported type %q", ErrInvalidSchema, t)
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	return s, nil
}

func present(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }

// RequestedSchema is an elicitation form's requestedSchema, decoded: an
// object schema whose properties are primitive schemas. Properties keep
// the order the server wrote them in, which is the natural order to show
// the fields.
type RequestedSchema struct {
	// Schema is the optional $schema (2025-11-25 and later).
	Schema string
	// Properties are the form's fields in the order the server sent them:
	// a slice, not a map (s.Properties["name"] does not compile); look one
	// up with [RequestedSchema.Property] and read its [PrimitiveSchema]
	// with a type switch (see the example).
	Properties []SchemaProperty
	Required   []string
}

// SchemaProperty is one named field of a [RequestedSchema].
type SchemaProperty struct {
	Name   string
	Schema PrimitiveSchema
}

// Property returns the schema of the field name.
func (s *RequestedSchema) Property(name string) (PrimitiveSchema, bool) {
	for _, p := range s.Properties {
		if p.Name == name {
			return p.Schema, true
		}
	}
	return nil, false
}

// IsRequired reports whether the field name is required.
func (s *RequestedSchema) IsRequired(name string) bool {
	for _, r := range s.Required {
		if r == name {
			return true
		}
	}
	return false
}

// ParseRequestedSchema decodes an elicitation requestedSchema
// ({type:"object", properties:{…}, required:[…]}), each property with
// [ParsePrimitiveSchema]. Errors wrap [ErrInvalidSchema] and name the
// offending property.
func ParseRequestedSchema(raw json.RawMessage) (*RequestedSchema, error) {
	var top struct {
		Schema     string          `json:"$schema"`
		Type       *string         `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
	}
	if top.Type == nil || *top.Type != "object" {
		return nil, fmt.Errorf(`%w: type is not "object"`, ErrInvalidSchema)
	}
	out := &RequestedSchema{Schema: top.Schema, Required: top.Required}
	if !present(top.Properties) {
		return nil, fmt.Errorf("%w: missing properties", ErrInvalidSchema)
	}
	dec := json.NewDecoder(bytes.NewReader(top.Properties))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: properties is not an object", ErrInvalidSchema)
	}
	seen := make(map[string]bool)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrInvalidSchema, err)
		}
		name, _ := tok.(string) // object keys are always strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%w: property %q: %v", ErrInvalidSchema, name, err)
		}
		if seen[name] {
			return nil, fmt.Errorf("%w: duplicate property %q", ErrInvalidSchema, name)
		}
		seen[name] = true
		ps, err := ParsePrimitiveSchema(v)
		if err != nil {
			return nil, fmt.Errorf("property %q: %w", name, err)
		}
		out.Properties = append(out.Properties, SchemaProperty{Name: name, Schema: ps})
	}
	return out, nil
}
