package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// FuzzParseRequestedSchema checks that no requestedSchema a server sends
// makes the parser panic, and that anything it accepts has well-formed
// properties.
func FuzzParseRequestedSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"type":"array","items":{"anyOf":[{"const":"x","title":"X"}]}}}}`,
		`{"type":"object","properties":{"a":{"type":"string","enum":["x"],"enumNames":["X"]}},"required":["a"]}`,
		`{"type":"object","properties":{"a":{"type":"array","items":null}}}`,
		`{"type":"object","properties":{"a":{}}}`,
		`{"type":"object","properties":{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := protocol.ParseRequestedSchema(data)
		if err != nil {
			return
		}
		for _, p := range s.Properties {
			if p.Schema == nil {
				t.Fatalf("property %q has a nil schema", p.Name)
			}
		}
	})
}

// FuzzDecodeResults checks that decoding any bytes into the result types
// the client reads from servers never panics, and that what decodes also
// encodes.
func FuzzDecodeResults(f *testing.F) {
	for _, s := range []string{
		`{"resultType":"input_required","inputRequests":{"a":{"method":"roots/list","id":1}},"requestState":""}`,
		`{"resultType":"complete","taskId":"t","status":"failed","createdAt":"","lastUpdatedAt":"","ttlMs":null,"error":{"code":1,"message":"m"}}`,
		`{"content":[{"type":"tool_result","content":[{"type":"text"}]}],"structuredContent":[1]}`,
		`{"_meta":{"progressToken":1.5,"io.modelcontextprotocol/subscriptionId":{}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		targets := []any{
			new(protocol.InputRequiredResult), new(protocol.DetailedTask), new(protocol.CallToolResult),
			new(protocol.TaskCreatedResult), new(protocol.ListToolsResult), new(protocol.ProgressParams),
			new(protocol.CancelledParams), new(protocol.DiscoverResult),
		}
		for _, v := range targets {
			if json.Unmarshal(data, v) != nil {
				continue
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("Marshal(%T) after a successful Unmarshal of %q: %v", v, data, err)
			}
		}
		var rp protocol.RequestParams
		if json.Unmarshal(data, &rp) == nil {
			_ = rp.Meta.SubscriptionID()
			_ = rp.Meta.ProgressToken()
			_ = rp.Meta.ServerInfo()
			_ = rp.Meta.ClientCapabilities()
		}
		_, _ = protocol.ResultTypeOf(data)
	})
}
