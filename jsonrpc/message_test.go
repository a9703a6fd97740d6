package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// rawCompact compares json.RawMessage values by their compact form.
var rawCompact = cmp.Comparer(func(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
})

var idCmp = cmp.Comparer(func(a, b jsonrpc.ID) bool { return a == b })

func TestDecodeMessageKinds(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want jsonrpc.Message
	}{
		{"request with object params", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
			&jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/list", Params: json.RawMessage(`{"cursor":"c"}`)}},
		{"request with array params", `{"jsonrpc":"2.0","id":"a","method":"m","params":[1,2]}`,
			&jsonrpc.Request{ID: jsonrpc.StringID("a"), Method: "m", Params: json.RawMessage(`[1,2]`)}},
		{"request without params", `{"jsonrpc":"2.0","id":2,"method":"ping"}`,
			&jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: "ping"}},
		{"request with null params", `{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`,
			&jsonrpc.Request{ID: jsonrpc.Int64ID(2), Method: "ping"}},
		{"notification", `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			&jsonrpc.Request{Method: "notifications/initialized"}},
		{"notification with params", `{"method":"notifications/progress","params":{"progress":1},"jsonrpc":"2.0"}`,
			&jsonrpc.Request{Method: "notifications/progress", Params: json.RawMessage(`{"progress":1}`)}},
		{"success response", `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}`,
			&jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`{"tools":[]}`)}},
		{"success response with null result", `{"jsonrpc":"2.0","id":1,"result":null}`,
			&jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`null`)}},
		{"error response", `{"jsonrpc":"2.0","id":"x","error":{"code":-32601,"message":"no such method"}}`,
			&jsonrpc.Response{ID: jsonrpc.StringID("x"), Error: &jsonrpc.Error{Code: -32601, Message: "no such method"}}},
		{"error response with data", `{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"u","data":{"supported":["2026-07-28"]}}}`,
			&jsonrpc.Response{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: -32022, Message: "u", Data: json.RawMessage(`{"supported":["2026-07-28"]}`)}}},
		{"error response with null data", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","data":null}}`,
			&jsonrpc.Response{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: 1, Message: "m"}}},
		{"error response with null id", `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}`,
			&jsonrpc.Response{Error: &jsonrpc.Error{Code: -32700, Message: "parse error"}}},
		{"error without message is accepted", `{"jsonrpc":"2.0","id":1,"error":{"code":5}}`,
			&jsonrpc.Response{ID: jsonrpc.Int64ID(1), Error: &jsonrpc.Error{Code: 5}}},
		{"surrounding white space", " \n\t{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\r\n",
			&jsonrpc.Request{Method: "m"}},
		{"unknown members ignored", `{"jsonrpc":"2.0","method":"m","extra":1}`,
			&jsonrpc.Request{Method: "m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := jsonrpc.DecodeMessage([]byte(tc.in))
			if err != nil {
				t.Fatalf("DecodeMessage(%s) error: %v", tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got, rawCompact, idCmp); diff != "" {
				t.Errorf("DecodeMessage(%s) mismatch (-want +got):\n%s", tc.in, diff)
			}
			if req, ok := got.(*jsonrpc.Request); ok {
				if req.IsNotification() != !req.ID.IsValid() {
					t.Errorf("IsNotification() = %v for id %v", req.IsNotification(), req.ID)
				}
			}
		})
	}
}

func TestDecodeMessageMalformed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want *jsonrpc.Error
	}{
		{"empty", ``, jsonrpc.ErrParse},
		{"blank", "  \n", jsonrpc.ErrParse},
		{"not JSON", `hello`, jsonrpc.ErrParse},
		{"truncated object", `{"jsonrpc":"2.0","method":"m"`, jsonrpc.ErrParse},
		{"trailing garbage", `{"jsonrpc":"2.0","method":"m"} x`, jsonrpc.ErrParse},
		{"broken batch", `[{"jsonrpc":"2.0",`, jsonrpc.ErrParse},
		{"BOM", "\ufeff{\"jsonrpc\":\"2.0\",\"method\":\"m\"}", jsonrpc.ErrParse},
		{"batch", `[{"jsonrpc":"2.0","method":"m"}]`, jsonrpc.ErrInvalidRequest},
		{"empty batch", `[]`, jsonrpc.ErrInvalidRequest},
		{"string", `"x"`, jsonrpc.ErrInvalidRequest},
		{"number", `1`, jsonrpc.ErrInvalidRequest},
		{"null", `null`, jsonrpc.ErrInvalidRequest},
		{"missing jsonrpc", `{"method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"null jsonrpc", `{"jsonrpc":null,"method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"numeric jsonrpc", `{"jsonrpc":2.0,"method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"empty object", `{}`, jsonrpc.ErrInvalidRequest},
		{"method not a string", `{"jsonrpc":"2.0","method":1}`, jsonrpc.ErrInvalidRequest},
		{"method null", `{"jsonrpc":"2.0","id":1,"method":null,"result":{}}`, jsonrpc.ErrInvalidRequest},
		{"empty method", `{"jsonrpc":"2.0","method":""}`, jsonrpc.ErrInvalidRequest},
		{"request with result", `{"jsonrpc":"2.0","id":1,"method":"m","result":{}}`, jsonrpc.ErrInvalidRequest},
		{"request with error", `{"jsonrpc":"2.0","id":1,"method":"m","error":{"code":1,"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"params a string", `{"jsonrpc":"2.0","method":"m","params":"p"}`, jsonrpc.ErrInvalidRequest},
		{"params a number", `{"jsonrpc":"2.0","method":"m","params":3}`, jsonrpc.ErrInvalidRequest},
		{"params true", `{"jsonrpc":"2.0","method":"m","params":true}`, jsonrpc.ErrInvalidRequest},
		{"neither method nor id", `{"jsonrpc":"2.0","result":{}}`, jsonrpc.ErrInvalidRequest},
		{"response with both result and error", `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"response with result and null error", `{"jsonrpc":"2.0","id":1,"result":{},"error":null}`, jsonrpc.ErrInvalidRequest},
		{"response with neither", `{"jsonrpc":"2.0","id":1}`, jsonrpc.ErrInvalidRequest},
		{"error null", `{"jsonrpc":"2.0","id":1,"error":null}`, jsonrpc.ErrInvalidRequest},
		{"error a string", `{"jsonrpc":"2.0","id":1,"error":"bad"}`, jsonrpc.ErrInvalidRequest},
		{"error without code", `{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"error code a float", `{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"error code an exponent", `{"jsonrpc":"2.0","id":1,"error":{"code":1e3,"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"error code a string", `{"jsonrpc":"2.0","id":1,"error":{"code":"-32601","message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"error code too large", `{"jsonrpc":"2.0","id":1,"error":{"code":99999999999999999999,"message":"m"}}`, jsonrpc.ErrInvalidRequest},
		{"error message not a string", `{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":2}}`, jsonrpc.ErrInvalidRequest},
		{"success with null id", `{"jsonrpc":"2.0","id":null,"result":{}}`, jsonrpc.ErrInvalidRequest},
		{"id float", `{"jsonrpc":"2.0","id":1.5,"result":{}}`, jsonrpc.ErrInvalidRequest},
		{"id float request", `{"jsonrpc":"2.0","id":2.0,"method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"id null request", `{"jsonrpc":"2.0","id":null,"method":"m"}`, jsonrpc.ErrInvalidRequest},
		{"id huge", `{"jsonrpc":"2.0","id":18446744073709551616,"result":{}}`, jsonrpc.ErrInvalidRequest},
		{"id array", `{"jsonrpc":"2.0","id":[1],"result":{}}`, jsonrpc.ErrInvalidRequest},
		{"params object malformed member type", `{"jsonrpc":"2.0","method":{"a":1}}`, jsonrpc.ErrInvalidRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := jsonrpc.DecodeMessage([]byte(tc.in))
			if err == nil {
				t.Fatalf("DecodeMessage(%s) = %#v, want error", tc.in, m)
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("DecodeMessage(%s) error = %v, want errors.Is %v", tc.in, err, tc.want)
			}
			other := jsonrpc.ErrParse
			if tc.want == jsonrpc.ErrParse {
				other = jsonrpc.ErrInvalidRequest
			}
			if errors.Is(err, other) {
				t.Errorf("DecodeMessage(%s) error %v also matches %v", tc.in, err, other)
			}
			var de *jsonrpc.DecodeError
			if !errors.As(err, &de) || de.Reason == "" {
				t.Errorf("DecodeMessage(%s) error %T, want *DecodeError with a reason", tc.in, err)
			}
			if !strings.HasPrefix(err.Error(), "jsonrpc: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
			if errors.Is(err, jsonrpc.ErrMethodNotFound) {
				t.Errorf("DecodeError matches ErrMethodNotFound")
			}
		})
	}
}

func TestEncodeMessage(t *testing.T) {
	tests := []struct {
		name string
		m    jsonrpc.Message
		want string
	}{
		{"request", &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: json.RawMessage(`{"name":"add"}`)},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add"}}`},
		{"request params compacted", &jsonrpc.Request{ID: jsonrpc.StringID("s"), Method: "m", Params: json.RawMessage("{\n  \"a\": [1, 2]\n}")},
			`{"jsonrpc":"2.0","id":"s","method":"m","params":{"a":[1,2]}}`},
		{"notification", &jsonrpc.Request{Method: "notifications/initialized"},
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"success", &jsonrpc.Response{ID: jsonrpc.Int64ID(3), Result: json.RawMessage(`{"x":"a b"}`)},
			`{"jsonrpc":"2.0","id":3,"result":{"x":"a b"}}`},
		{"success without result encodes {}", &jsonrpc.Response{ID: jsonrpc.Int64ID(3)},
			`{"jsonrpc":"2.0","id":3,"result":{}}`},
		{"error", &jsonrpc.Response{ID: jsonrpc.Int64ID(4), Error: &jsonrpc.Error{Code: -32601, Message: "nope", Data: json.RawMessage(`{"m": "x"}`)}},
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"nope","data":{"m":"x"}}}`},
		{"error with null id and min code", &jsonrpc.Response{Error: &jsonrpc.Error{Code: -9223372036854775808, Message: ""}},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-9223372036854775808,"message":""}}`},
		{"error with positive code", &jsonrpc.Response{ID: jsonrpc.Int64ID(0), Error: &jsonrpc.Error{Code: 9223372036854775807, Message: "<&>"}},
			`{"jsonrpc":"2.0","id":0,"error":{"code":9223372036854775807,"message":"\u003c\u0026\u003e"}}`},
		{"invalid raw JSON is copied as is", &jsonrpc.Request{Method: "m", Params: json.RawMessage("{ bad")},
			`{"jsonrpc":"2.0","method":"m","params":{ bad}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := jsonrpc.EncodeMessage(tc.m)
			if err != nil || string(b) != tc.want {
				t.Errorf("EncodeMessage = %s, %v; want %s", b, err, tc.want)
			}
			pre := []byte("prefix")
			b2, err := jsonrpc.AppendMessage(pre, tc.m)
			if err != nil || string(b2) != "prefix"+tc.want {
				t.Errorf("AppendMessage = %s, %v; want prefix%s", b2, err, tc.want)
			}
		})
	}
	if _, err := jsonrpc.EncodeMessage(nil); err == nil {
		t.Errorf("EncodeMessage(nil) = nil error")
	}
	// Typed nil messages are an error, not a panic.
	if _, err := jsonrpc.EncodeMessage((*jsonrpc.Request)(nil)); err == nil {
		t.Errorf("EncodeMessage((*Request)(nil)) = nil error")
	}
	if _, err := jsonrpc.EncodeMessage((*jsonrpc.Response)(nil)); err == nil {
		t.Errorf("EncodeMessage((*Response)(nil)) = nil error")
	}
}

// TestEncodeDecodeRoundTrip: every valid message kind survives
// Encode→Decode→Encode unchanged.
func TestEncodeDecodeRoundTrip(t *testing.T) {
	msgs := []jsonrpc.Message{
		&jsonrpc.Request{ID: jsonrpc.Int64ID(-1), Method: "a\u2028b", Params: json.RawMessage(`[]`)},
		&jsonrpc.Request{ID: jsonrpc.StringID("\x00\"\\"), Method: "m"},
		&jsonrpc.Request{Method: "n", Params: json.RawMessage(`{"k":"\u00e9"}`)},
		&jsonrpc.Response{ID: jsonrpc.StringID("r"), Result: json.RawMessage(`"str"`)},
		&jsonrpc.Response{ID: jsonrpc.Int64ID(9), Error: &jsonrpc.Error{Code: 7, Message: "\t", Data: json.RawMessage(`[null]`)}},
	}
	for _, m := range msgs {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		got, err := jsonrpc.DecodeMessage(b)
		if err != nil {
			t.Fatalf("DecodeMessage(%s) error: %v", b, err)
		}
		if diff := cmp.Diff(m, got, rawCompact, idCmp); diff != "" {
			t.Errorf("round trip of %s mismatch (-want +got):\n%s", b, diff)
		}
	}
}

// interestingStrings returns many strings for the escaping property test:
// every single byte, runes across the planes, U+2028/U+2029, invalid UTF-8
// and random mixes from a fixed seed.
func interestingStrings() []string {
	var out []string
	for c := 0; c < 256; c++ {
		out = append(out, string([]byte{byte(c)}), "a"+string([]byte{byte(c)})+"z")
	}
	for r := rune(0); r < 0x3000; r += 7 {
		out = append(out, string(r))
	}
	out = append(out,
		"\u2028", "\u2029", "x\u2028y\u2029z", "\ufffd", "\U0001F600", "\uFEFF",
		"\xed\xa0\x80", // a UTF-16 surrogate encoded in UTF-8: invalid
		"\xc0\xaf", "\xe2\x80", "\xf4\x90\x80\x80", "\xff\xfe",
		"<script>&amp;</script>", `"\/`, "\b\f\n\r\t\v\x7f",
		strings.Repeat("é\x01", 100),
	)
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "\"", "\\", "\n", "\x00", "\x1f", "<", "&", "é", "\u2028", "\xff", "\xe2\x80", "😀", " ", "\x7f"}
	for i := 0; i < 2000; i++ {
		var b strings.Builder
		for j := rng.IntN(12); j > 0; j-- {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		out = append(out, b.String())
		raw := make([]byte, rng.IntN(10))
		for k := range raw {
			raw[k] = byte(rng.Uint32())
		}
		out = append(out, string(raw))
	}
	return out
}

// TestStringEscapingMatchesEncodingJSON: our string encoder produces the
// same bytes as encoding/json for every string, and decodes back to what
// encoding/json decodes.
func TestStringEscapingMatchesEncodingJSON(t *testing.T) {
	for _, s := range interestingStrings() {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := jsonrpc.StringID(s).MarshalJSON()
		if !bytes.Equal(got, want) {
			t.Errorf("StringID(%q).MarshalJSON() = %s, encoding/json = %s", s, got, want)
			continue
		}
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: s, ID: jsonrpc.StringID(s)})
		if err != nil {
			t.Fatal(err)
		}
		if !json.Valid(msg) {
			t.Errorf("EncodeMessage with %q is not valid JSON: %s", s, msg)
		}
		if bytes.ContainsAny(msg, "\n\r") {
			t.Errorf("EncodeMessage with %q contains a raw line break", s)
		}
		if s == "" {
			continue
		}
		m, err := jsonrpc.DecodeMessage(msg)
		if err != nil {
			t.Fatalf("DecodeMessage(%s) error: %v", msg, err)
		}
		var back string
		_ = json.Unmarshal(want, &back)
		req := m.(*jsonrpc.Request)
		if req.Method != back || req.ID != jsonrpc.StringID(back) {
			t.Errorf("round trip of %q = %q / %v, want %q", s, req.Method, req.ID, back)
		}
		if !utf8.ValidString(req.Method) {
			t.Errorf("decoded method %q is not valid UTF-8", req.Method)
		}
	}
}

func TestResponseErr(t *testing.T) {
	ok := &jsonrpc.Response{ID: jsonrpc.Int64ID(1), Result: json.RawMessage(`{}`)}
	if err := ok.Err(); err != nil {
		t.Errorf("Err() = %v, want nil (no typed-nil)", err)
	}
	bad := jsonrpc.NewErrorResponse(jsonrpc.Int64ID(1), jsonrpc.ErrMethodNotFound)
	if err := bad.Err(); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("Err() = %v, want ErrMethodNotFound", err)
	}
}

func TestConstructors(t *testing.T) {
	type P struct {
		A int `json:"a"`
	}
	tests := []struct {
		name string
		make func() (jsonrpc.Message, error)
		want string
	}{
		{"NewRequest struct", func() (jsonrpc.Message, error) { return jsonrpc.NewRequest(jsonrpc.Int64ID(1), "m", P{A: 1}) },
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}`},
		{"NewRequest nil params", func() (jsonrpc.Message, error) { return jsonrpc.NewRequest(jsonrpc.Int64ID(1), "m", nil) },
			`{"jsonrpc":"2.0","id":1,"method":"m"}`},
		{"NewRequest raw", func() (jsonrpc.Message, error) {
			return jsonrpc.NewRequest(jsonrpc.StringID("x"), "m", json.RawMessage(`[1]`))
		}, `{"jsonrpc":"2.0","id":"x","method":"m","params":[1]}`},
		{"NewRequest bytes", func() (jsonrpc.Message, error) { return jsonrpc.NewRequest(jsonrpc.Int64ID(1), "m", []byte(`{}`)) },
			`{"jsonrpc":"2.0","id":1,"method":"m","params":{}}`},
		{"NewNotification", func() (jsonrpc.Message, error) { return jsonrpc.NewNotification("n", map[string]int{"b": 2}) },
			`{"jsonrpc":"2.0","method":"n","params":{"b":2}}`},
		{"NewResponse nil", func() (jsonrpc.Message, error) { return jsonrpc.NewResponse(jsonrpc.Int64ID(1), nil) },
			`{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"NewResponse raw", func() (jsonrpc.Message, error) {
			return jsonrpc.NewResponse(jsonrpc.Int64ID(1), json.RawMessage(`{"r":1}`))
		}, `{"jsonrpc":"2.0","id":1,"result":{"r":1}}`},
		{"NewResponse struct", func() (jsonrpc.Message, error) { return jsonrpc.NewResponse(jsonrpc.Int64ID(1), P{A: 3}) },
			`{"jsonrpc":"2.0","id":1,"result":{"a":3}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := tc.make()
			if err != nil {
				t.Fatal(err)
			}
			b, err := jsonrpc.EncodeMessage(m)
			if err != nil || string(b) != tc.want {
				t.Errorf("encoded = %s, %v; want %s", b, err, tc.want)
			}
		})
	}
	if _, err := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "m", make(chan int)); err == nil {
		t.Errorf("NewRequest(chan) = nil error")
	}
	if _, err := jsonrpc.NewResponse(jsonrpc.Int64ID(1), func() {}); err == nil {
		t.Errorf("NewResponse(func) = nil error")
	}
}
