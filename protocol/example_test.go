package protocol_test

import (
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/protocol"
)

func ExampleParseRequestedSchema() {
	raw := json.RawMessage(`{
		"type": "object",
		"properties": {
			"name":  {"type": "string", "minLength": 1},
			"color": {"type": "string", "oneOf": [{"const": "#f00", "title": "Red"}]},
			"tags":  {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}
		},
		"required": ["name"]
	}`)
	s, err := protocol.ParseRequestedSchema(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range s.Properties {
		fmt.Printf("%s %T required=%v\n", p.Name, p.Schema, s.IsRequired(p.Name))
	}
	// Output:
	// name *protocol.StringSchema required=true
	// color *protocol.TitledSingleSelectEnumSchema required=false
	// tags *protocol.UntitledMultiSelectEnumSchema required=false
}

func ExampleCallToolResult_Text() {
	var r protocol.CallToolResult
	_ = json.Unmarshal([]byte(`{"resultType":"complete","content":[
		{"type":"text","text":"first"},
		{"type":"image","data":"AAAA","mimeType":"image/png"},
		{"type":"text","text":"second"}],"isError":false}`), &r)
	fmt.Println(r.Text())
	fmt.Println(r.Failed())
	// Output:
	// first
	// second
	// false
}

func ExampleRequestMeta() {
	m, _ := protocol.RequestMeta{
		ProtocolVersion: protocol.Version20260728,
		ClientInfo:      &protocol.Implementation{Name: "my-client", Version: "1.0.0"},
		ProgressToken:   protocol.IntProgressToken(1),
	}.Meta()
	b, _ := json.Marshal(protocol.CallToolParams{Name: "add", Arguments: json.RawMessage(`{"a":1,"b":2}`), Meta: m})
	fmt.Println(string(b))
	// Output:
	// {"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"my-client","version":"1.0.0"},"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":1}}
}

func ExampleResultTypeOf() {
	for _, raw := range []string{
		`{"content":[]}`,
		`{"resultType":"input_required","requestState":"abc"}`,
	} {
		rt, _ := protocol.ResultTypeOf(json.RawMessage(raw))
		fmt.Println(rt)
	}
	// Output:
	// complete
	// input_required
}
