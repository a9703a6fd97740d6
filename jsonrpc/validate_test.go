package jsonrpc_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

func parseMap(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("test JSON %s: %v", s, err)
	}
	return m
}

// TestValidators: the seed 002 validators (valid_request?,
// valid_notification?, valid_response?: an id, no method, exactly one of
// result and error).
func TestValidators(t *testing.T) {
	tests := []struct {
		name                   string
		msg                    string
		request, notif, respOK bool
	}{
		{"request", `{"jsonrpc":"2.0","id":1,"method":"m"}`, true, false, false},
		{"request with string id", `{"jsonrpc":"2.0","id":"a","method":"m","params":{}}`, true, false, false},
		{"request with array params", `{"jsonrpc":"2.0","id":1,"method":"m","params":[]}`, true, false, false},
		{"request with scalar params", `{"jsonrpc":"2.0","id":1,"method":"m","params":1}`, false, false, false},
		{"request with null params", `{"jsonrpc":"2.0","id":1,"method":"m","params":null}`, false, false, false},
		{"request with float id", `{"jsonrpc":"2.0","id":1.5,"method":"m"}`, false, false, false},
		{"request with integral float id", `{"jsonrpc":"2.0","id":2.0,"method":"m"}`, true, false, false},
		{"request with null id", `{"jsonrpc":"2.0","id":null,"method":"m"}`, false, false, false},
		{"request with bool id", `{"jsonrpc":"2.0","id":true,"method":"m"}`, false, false, false},
		{"empty method", `{"jsonrpc":"2.0","id":1,"method":""}`, false, false, false},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":1}`, false, false, false},
		{"wrong version", `{"jsonrpc":"1.0","id":1,"method":"m"}`, false, false, false},
		{"missing version", `{"id":1,"method":"m"}`, false, false, false},
		{"notification", `{"jsonrpc":"2.0","method":"n"}`, false, true, false},
		{"notification with params", `{"jsonrpc":"2.0","method":"n","params":{"a":1}}`, false, true, false},
		{"notification with scalar params", `{"jsonrpc":"2.0","method":"n","params":"x"}`, false, false, false},
		{"success response", `{"jsonrpc":"2.0","id":1,"result":{}}`, false, false, true},
		{"success response with null result", `{"jsonrpc":"2.0","id":"x","result":null}`, false, false, true},
		{"success response with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, false, false, false},
		{"error response", `{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"m"}}`, false, false, true},
		{"error response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m"}}`, false, false, true},
		{"error response with float id", `{"jsonrpc":"2.0","id":1.5,"error":{"code":-32700,"message":"m"}}`, false, false, false},
		{"response without id", `{"jsonrpc":"2.0","result":{}}`, false, false, false},
		{"response with method", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, false, false, false},
		{"response with both", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, false, false, false},
		{"response with neither", `{"jsonrpc":"2.0","id":1}`, false, false, false},
		{"error not an object", `{"jsonrpc":"2.0","id":1,"error":"x"}`, false, false, false},
		{"error without message", `{"jsonrpc":"2.0","id":1,"error":{"code":1}}`, false, false, false},
		{"error with float code", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, false, false, false},
		{"error with string code", `{"jsonrpc":"2.0","id":1,"error":{"code":"1","message":"m"}}`, false, false, false},
		{"response wrong version", `{"jsonrpc":"2","id":1,"result":{}}`, false, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := parseMap(t, tc.msg)
			if got := jsonrpc.ValidRequest(m); got != tc.request {
				t.Errorf("ValidRequest(%s) = %v, want %v", tc.msg, got, tc.request)
			}
			if got := jsonrpc.ValidNotification(m); got != tc.notif {
				t.Errorf("ValidNotification(%s) = %v, want %v", tc.msg, got, tc.notif)
			}
			if got := jsonrpc.ValidResponse(m); got != tc.respOK {
				t.Errorf("ValidResponse(%s) = %v, want %v", tc.msg, got, tc.respOK)
			}
		})
	}
}

// TestValidatorsGoValues: maps built in Go (json.Number, ints, NaN, Inf).
func TestValidatorsGoValues(t *testing.T) {
	tests := []struct {
		name string
		id   any
		want bool
	}{
		{"int", 1, true},
		{"int64", int64(1), true},
		{"int32", int32(1), true},
		{"json.Number integer", json.Number("12"), true},
		{"json.Number float", json.Number("1.5"), false},
		{"NaN", math.NaN(), false},
		{"Inf", math.Inf(1), false},
		{"uint8 unsupported", uint8(1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := map[string]any{"jsonrpc": "2.0", "id": tc.id, "method": "m"}
			if got := jsonrpc.ValidRequest(m); got != tc.want {
				t.Errorf("ValidRequest(id %#v) = %v, want %v", tc.id, got, tc.want)
			}
		})
	}
	if jsonrpc.ValidRequest(nil) || jsonrpc.ValidNotification(nil) || jsonrpc.ValidResponse(nil) {
		t.Errorf("validators accept a nil map")
	}
}
