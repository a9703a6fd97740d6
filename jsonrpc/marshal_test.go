package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestMessageMarshalJSON: json.Marshal of each message type, as a value,
// a pointer and a Message interface, gives the wire form EncodeMessage
// gives; json.Unmarshal reads it back to the same message.
func TestMessageMarshalJSON(t *testing.T) {
	for _, tc := range []struct {
		name string
		msg  jsonrpc.Message
		wire string
	}{
		{"request", &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: json.RawMessage(`{"name":"echo"}`)},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`},
		{"string-id", &jsonrpc.Request{ID: jsonrpc.StringID("1"), Method: "ping"},
			`{"jsonrpc":"2.0","id":"1","method":"ping"}`},
		{"notification", &jsonrpc.Request{Method: "notifications/initialized"},
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"result", &jsonrpc.Response{ID: jsonrpc.Int64ID(7), Result: json.RawMessage(`{"tools":[]}`)},
			`{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}`},
		{"error", &jsonrpc.Response{ID: jsonrpc.StringID("a"), Error: &jsonrpc.Error{Code: -32601, Message: "Method not found", Data: json.RawMessage(`{"m":"x"}`)}},
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"Method not found","data":{"m":"x"}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var value any
			switch m := tc.msg.(type) {
			case *jsonrpc.Request:
				value = *m
			case *jsonrpc.Response:
				value = *m
			}
			for _, v := range []any{tc.msg, value, struct{ M jsonrpc.Message }{tc.msg}} {
				got, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("json.Marshal(%T): %v", v, err)
				}
				want := tc.wire
				if _, ok := v.(struct{ M jsonrpc.Message }); ok {
					want = `{"M":` + tc.wire + `}`
				}
				if string(got) != want {
					t.Errorf("json.Marshal(%T) = %s, want %s", v, got, want)
				}
			}
			var back jsonrpc.Message
			switch tc.msg.(type) {
			case *jsonrpc.Request:
				var r jsonrpc.Request
				if err := json.Unmarshal([]byte(tc.wire), &r); err != nil {
					t.Fatalf("json.Unmarshal(%s): %v", tc.wire, err)
				}
				back = &r
			case *jsonrpc.Response:
				var r jsonrpc.Response
				if err := json.Unmarshal([]byte(tc.wire), &r); err != nil {
					t.Fatalf("json.Unmarshal(%s): %v", tc.wire, err)
				}
				back = &r
			}
			if diff := cmp.Diff(tc.msg, back, cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })); diff != "" {
				t.Errorf("round trip (-sent +decoded):\n%s", diff)
			}
		})
	}
}

// TestMessageUnmarshalJSONWrongKind: a response is not a request, nor a
// request a response, nor a non-message either; each is a DecodeError.
func TestMessageUnmarshalJSONWrongKind(t *testing.T) {
	var req jsonrpc.Request
	var resp jsonrpc.Response
	for _, tc := range []struct {
		data string
		into any
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, &req},
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, &resp},
		{`{"id":1,"method":"ping"}`, &req},
	} {
		err := json.Unmarshal([]byte(tc.data), tc.into)
		if _, ok := errors.AsType[*jsonrpc.DecodeError](err); !ok {
			t.Errorf("json.Unmarshal(%s, %T) = %v, want a *jsonrpc.DecodeError", tc.data, tc.into, err)
		}
	}
}
