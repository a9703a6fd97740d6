package protocol_test

import (
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/protocol"
)

// A sampling handler reads each message's content, which is raw JSON (one
// block, or an array of blocks): Text gives its text, Blocks every block.
func ExampleSamplingMessage_Text() {
	var p protocol.CreateMessageParams
	_ = json.Unmarshal([]byte(`{"maxTokens": 100, "messages": [
		{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}},
		{"role": "user", "content": [{"type": "text", "text": "Answer in one word."}, {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}]}
	]}`), &p)
	for _, m := range p.Messages {
		blocks, _ := m.Blocks()
		fmt.Printf("%s: %q (%d block(s))\n", m.Role, m.Text(), len(blocks))
	}
	// Output:
	// user: "What is the capital of France?" (1 block(s))
	// user: "Answer in one word." (2 block(s))
}

// An elicitation handler parses the requested schema: Properties is a
// slice in the server's order, Property looks one up by name, and each
// PrimitiveSchema is read with a type switch.
func ExampleRequestedSchema() {
	params := protocol.ElicitParams{Message: "Book a table", RequestedSchema: json.RawMessage(`{
		"type": "object",
		"properties": {
			"name":   {"type": "string", "minLength": 1, "title": "Your name"},
			"guests": {"type": "integer", "minimum": 1, "maximum": 12},
			"time":   {"type": "string", "enum": ["19:00", "21:00"]},
			"window": {"type": "boolean", "default": true}
		},
		"required": ["name", "guests"]
	}`)}
	s, err := protocol.ParseRequestedSchema(params.RequestedSchema)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range s.Properties {
		switch ps := p.Schema.(type) {
		case *protocol.StringSchema:
			fmt.Printf("%s: text %q, at least %d character(s)", p.Name, ps.Title, *ps.MinLength)
		case *protocol.NumberSchema:
			fmt.Printf("%s: %s from %v to %v", p.Name, ps.Type, *ps.Minimum, *ps.Maximum)
		case *protocol.UntitledSingleSelectEnumSchema:
			fmt.Printf("%s: one of %v", p.Name, ps.Enum)
		case *protocol.BooleanSchema:
			fmt.Printf("%s: yes or no, default %v", p.Name, *ps.Default)
		default:
			fmt.Printf("%s: %T", p.Name, ps)
		}
		fmt.Printf(", required %v\n", s.IsRequired(p.Name))
	}
	if ps, ok := s.Property("guests"); ok {
		fmt.Printf("guests is a %T\n", ps)
	}
	// Output:
	// name: text "Your name", at least 1 character(s), required true
	// guests: integer from 1 to 12, required true
	// time: one of [19:00 21:00], required false
	// window: yes or no, default true, required false
	// guests is a *protocol.NumberSchema
}
