package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// roundTrip decodes in into a fresh T, encodes it, and returns the result.
func roundTrip[T any](t *testing.T, in string) []byte {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(in), &v); err != nil {
		t.Fatalf("Unmarshal(%s): %v", in, err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	return out
}

// TestUnknownMembersSurvive checks the places where the spec allows
// extension: _meta on every kind of message, capabilities' experimental
// and extensions maps, and unknown members of embedded input requests.
func TestUnknownMembersSurvive(t *testing.T) {
	const meta = `"_meta":{"com.example/trace":{"deep":[1,2,{"x":null}]},"traceparent":"00-abc-def-01","io.modelcontextprotocol/unknownFuture":12345678901234567890}`
	tests := []struct {
		name string
		in   string
		rt   func(*testing.T, string) []byte
	}{
		{"CallToolParams _meta", `{"name":"t",` + meta + `}`, roundTrip[protocol.CallToolParams]},
		{"CallToolResult _meta", `{"content":[],` + meta + `}`, roundTrip[protocol.CallToolResult]},
		{"content block _meta", `{"type":"text","text":"hi",` + meta + `}`, roundTrip[protocol.Content]},
		{"Tool _meta", `{"name":"t","inputSchema":{"type":"object","x-vendor":{"a":1}},` + meta + `}`, roundTrip[protocol.Tool]},
		{"DiscoverResult _meta", `{"resultType":"complete","supportedVersions":[],"capabilities":{},"ttlMs":0,"cacheScope":"public",` + meta + `}`, roundTrip[protocol.DiscoverResult]},
		{"notification _meta", `{"progressToken":"p","progress":1,` + meta + `}`, roundTrip[protocol.ProgressParams]},
		{"listen ack _meta", `{"notifications":{},` + meta + `}`, roundTrip[protocol.SubscriptionsAcknowledgedParams]},
		{"InputRequiredResult _meta", `{"resultType":"input_required","requestState":"",` + meta + `}`, roundTrip[protocol.InputRequiredResult]},
		{"DetailedTask _meta", `{"taskId":"t","status":"working","createdAt":"a","lastUpdatedAt":"b","ttlMs":null,` + meta + `}`, roundTrip[protocol.DetailedTask]},
		{"client experimental and extensions",
			`{"experimental":{"com.example/x":{"level":3,"list":["a"]}},"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"com.example/empty":{}}}`,
			roundTrip[protocol.ClientCapabilities]},
		{"server experimental and extensions",
			`{"experimental":{"com.example/x":{"on":true}},"extensions":{"io.modelcontextprotocol/tasks":{},"com.example/y":{"n":1.5}},"tools":{"listChanged":true}}`,
			roundTrip[protocol.ServerCapabilities]},
		{"initialize capabilities",
			`{"protocolVersion":"2025-11-25","capabilities":{"experimental":{"a.b/c":{"z":[]}}},"clientInfo":{"name":"c","version":"1"},` + meta + `}`,
			roundTrip[protocol.InitializeParams]},
		{"input request extra members",
			`{"method":"roots/list","id":"legacy-1","com.example/hint":{"k":"v"}}`,
			roundTrip[protocol.InputRequest]},
		{"input responses raw", `{"a":{"action":"cancel","_meta":{"x.y/z":1}},"b":{"roots":[]}}`, roundTrip[protocol.InputResponses]},
		{"structured content any value", `{"content":[],"structuredContent":"just a string"}`, roundTrip[protocol.CallToolResult]},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.rt(t, tc.in)
			if d := jsonDiff(t, []byte(tc.in), got); d != "" {
				t.Errorf("round trip of %s changed it (-in +out):\n%s", tc.in, d)
			}
		})
	}
}

// TestMetaRawValuesUntouched checks that _meta values are kept byte for
// byte (no float64 conversion of large integers).
func TestMetaRawValuesUntouched(t *testing.T) {
	in := `{"_meta":{"big":12345678901234567890,"f":1.0}}`
	var p protocol.RequestParams
	if err := json.Unmarshal([]byte(in), &p); err != nil {
		t.Fatal(err)
	}
	if got, want := string(p.Meta["big"]), "12345678901234567890"; got != want {
		t.Errorf(`Meta["big"] = %s, want %s`, got, want)
	}
	if got, want := string(p.Meta["f"]), "1.0"; got != want {
		t.Errorf(`Meta["f"] = %s, want %s`, got, want)
	}
}

// TestPresenceKept checks members whose absence and emptiness differ.
func TestPresenceKept(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"no cursor", protocol.PaginatedParams{}, `{}`},
		{"empty cursor", protocol.PaginatedParams{Cursor: protocol.Cursor("")}, `{"cursor":""}`},
		{"no next cursor", protocol.ListToolsResult{}, `{"tools":[]}`},
		{"empty next cursor", protocol.ListToolsResult{NextCursor: protocol.Cursor("")}, `{"tools":[],"nextCursor":""}`},
		{"no request state", protocol.CallToolParams{Name: "t"}, `{"name":"t"}`},
		{"empty request state", protocol.CallToolParams{Name: "t", RequestState: strp("")}, `{"name":"t","requestState":""}`},
		{"input required defaults", protocol.InputRequiredResult{RequestState: strp("")}, `{"resultType":"input_required","requestState":""}`},
		{"task created defaults", protocol.TaskCreatedResult{ExtTask: protocol.ExtTask{TaskID: "t", Status: protocol.TaskWorking}}, `{"resultType":"task","taskId":"t","status":"working","createdAt":"","lastUpdatedAt":"","ttlMs":null}`},
		{"isError false", protocol.CallToolResult{IsError: protocol.Bool(false)}, `{"content":[],"isError":false}`},
		{"task ttl null", protocol.Task{TaskID: "t", Status: protocol.TaskWorking}, `{"taskId":"t","status":"working","createdAt":"","lastUpdatedAt":"","ttl":null}`},
		{"ext task ttlMs null", protocol.ExtTask{TaskID: "t", Status: protocol.TaskWorking}, `{"taskId":"t","status":"working","createdAt":"","lastUpdatedAt":"","ttlMs":null}`},
		{"ttlMs zero", protocol.ReadResourceResult{TTLMs: new(int64)}, `{"contents":[],"ttlMs":0}`},
		{"tool without schema", protocol.Tool{Name: "t"}, `{"name":"t","inputSchema":{"type":"object"}}`},
		{"completion zero", protocol.Completion{Values: []string{}, Total: new(int64), HasMore: protocol.Bool(false)}, `{"values":[],"total":0,"hasMore":false}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("Marshal(%#v) = %s, want %s", tc.v, got, tc.want)
			}
		})
	}
}
