package jsonrpc_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// deepResult is an answer to call 7 whose result is nested deeper than the
// decoder allows.
func deepResult(id string) string {
	const depth = 10001
	return `{"jsonrpc":"2.0","id":` + id + `,"result":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
}

// TestDecodeErrorRecoversID checks that a response-shaped object that is
// not a valid message fails with a *DecodeError naming its id, for every
// way an answer can be broken, and that requests, non-objects and
// unrecoverable ids carry none.
func TestDecodeErrorRecoversID(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     jsonrpc.ID
	}{
		{"result and error", `{"jsonrpc":"2.0","id":7,"result":{},"error":{"code":1,"message":"x"}}`, jsonrpc.Int64ID(7)},
		{"neither", `{"jsonrpc":"2.0","id":7}`, jsonrpc.Int64ID(7)},
		{"code not an integer", `{"jsonrpc":"2.0","id":7,"error":{"code":1.5,"message":"x"}}`, jsonrpc.Int64ID(7)},
		{"code a string", `{"jsonrpc":"2.0","id":7,"error":{"code":"1","message":"x"}}`, jsonrpc.Int64ID(7)},
		{"error a string", `{"jsonrpc":"2.0","id":7,"error":"boom"}`, jsonrpc.Int64ID(7)},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":7,"result":{}}`, jsonrpc.Int64ID(7)},
		{"jsonrpc missing", `{"id":"a\u0062","result":{}}`, jsonrpc.StringID("ab")},
		{"too deep", deepResult("7"), jsonrpc.Int64ID(7)},
		{"too deep, string id", deepResult(`"s-1"`), jsonrpc.StringID("s-1")},
		{"too deep, id after the result", `{"jsonrpc":"2.0","result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `,"id":9}`, jsonrpc.Int64ID(9)},
		{"request: the id is the server's", `{"jsonrpc":"2.0","id":7,"method":"x","result":{}}`, jsonrpc.ID{}},
		{"request too deep", `{"jsonrpc":"2.0","id":7,"method":"x","params":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, jsonrpc.ID{}},
		{"id a float", `{"jsonrpc":"2.0","id":7.5,"result":{}}`, jsonrpc.ID{}},
		{"id an object", `{"jsonrpc":"2.0","id":{},"error":"x"}`, jsonrpc.ID{}},
		{"not JSON", `{"jsonrpc":"2.0","id":7,"result":{`, jsonrpc.ID{}},
		{"banner", `server v1.2 starting`, jsonrpc.ID{}},
		{"array", `[{"jsonrpc":"2.0","id":7}]`, jsonrpc.ID{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, dec := range []func([]byte) (jsonrpc.Message, error){jsonrpc.DecodeMessage, jsonrpc.DecodeMessageOwned} {
				m, err := dec([]byte(tc.in))
				de, ok := errors.AsType[*jsonrpc.DecodeError](err)
				if !ok {
					t.Fatalf("decode = %v, %v; want a *DecodeError", m, err)
				}
				if de.ID != tc.want {
					t.Errorf("DecodeError.ID = %v; want %v (%v)", de.ID, tc.want, err)
				}
			}
		})
	}
}
