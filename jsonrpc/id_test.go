package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

func TestIDKindsDiffer(t *testing.T) {
	if jsonrpc.Int64ID(1) == jsonrpc.StringID("1") {
		t.Errorf("Int64ID(1) == StringID(\"1\"), want different ids")
	}
	if jsonrpc.Int64ID(0) == (jsonrpc.ID{}) {
		t.Errorf("Int64ID(0) == zero ID, want different ids")
	}
	if jsonrpc.StringID("") == (jsonrpc.ID{}) {
		t.Errorf("StringID(\"\") == zero ID, want different ids")
	}
	if a, b := jsonrpc.Int64ID(7), jsonrpc.Int64ID(7); a != b {
		t.Errorf("equal ids compare unequal")
	}
	if a, b := jsonrpc.StringID("a"), jsonrpc.StringID("a"); a != b {
		t.Errorf("equal ids compare unequal")
	}
}

func TestIDAccessors(t *testing.T) {
	tests := []struct {
		id       jsonrpc.ID
		valid    bool
		isString bool
		n        int64
		nOK      bool
		s        string
		sOK      bool
		raw      any
		str      string
	}{
		{jsonrpc.Int64ID(42), true, false, 42, true, "", false, int64(42), "42"},
		{jsonrpc.StringID("42"), true, true, 0, false, "42", true, "42", `"42"`},
		{jsonrpc.ID{}, false, false, 0, false, "", false, nil, "<none>"},
	}
	for _, tc := range tests {
		if got := tc.id.IsValid(); got != tc.valid {
			t.Errorf("%v.IsValid() = %v, want %v", tc.id, got, tc.valid)
		}
		if got := tc.id.IsString(); got != tc.isString {
			t.Errorf("%v.IsString() = %v, want %v", tc.id, got, tc.isString)
		}
		if n, ok := tc.id.Int64(); n != tc.n || ok != tc.nOK {
			t.Errorf("%v.Int64() = %d, %v; want %d, %v", tc.id, n, ok, tc.n, tc.nOK)
		}
		if s, ok := tc.id.Str(); s != tc.s || ok != tc.sOK {
			t.Errorf("%v.Str() = %q, %v; want %q, %v", tc.id, s, ok, tc.s, tc.sOK)
		}
		if got := tc.id.Raw(); got != tc.raw {
			t.Errorf("%v.Raw() = %#v, want %#v", tc.id, got, tc.raw)
		}
		if got := tc.id.String(); got != tc.str {
			t.Errorf("ID.String() = %q, want %q", got, tc.str)
		}
	}
}

func TestIDRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want jsonrpc.ID
		out  string
	}{
		{"integer", `1`, jsonrpc.Int64ID(1), `1`},
		{"string digits", `"1"`, jsonrpc.StringID("1"), `"1"`},
		{"zero", `0`, jsonrpc.Int64ID(0), `0`},
		{"negative", `-17`, jsonrpc.Int64ID(-17), `-17`},
		{"max int64", strconv.FormatInt(math.MaxInt64, 10), jsonrpc.Int64ID(math.MaxInt64), strconv.FormatInt(math.MaxInt64, 10)},
		{"min int64", strconv.FormatInt(math.MinInt64, 10), jsonrpc.Int64ID(math.MinInt64), strconv.FormatInt(math.MinInt64, 10)},
		{"null is the zero id", `null`, jsonrpc.ID{}, `null`},
		{"empty string", `""`, jsonrpc.StringID(""), `""`},
		{"escaped string", `"a\u0022b\n<"`, jsonrpc.StringID("a\"b\n<"), `"a\"b\n\u003c"`},
		{"white space around", " 5 ", jsonrpc.Int64ID(5), `5`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var id jsonrpc.ID
			if err := json.Unmarshal([]byte(tc.in), &id); err != nil {
				t.Fatalf("Unmarshal(%s) error: %v", tc.in, err)
			}
			if id != tc.want {
				t.Errorf("Unmarshal(%s) = %v, want %v", tc.in, id, tc.want)
			}
			b, err := json.Marshal(id)
			if err != nil || string(b) != tc.out {
				t.Errorf("Marshal(%v) = %s, %v; want %s", id, b, err, tc.out)
			}
			if got := string(id.AppendJSON([]byte("x"))); got != "x"+tc.out {
				t.Errorf("AppendJSON = %s, want x%s", got, tc.out)
			}
		})
	}
}

func TestIDRejects(t *testing.T) {
	for _, in := range []string{
		`1.0`, `1.5`, `1e3`, `-0.0`, `1E+2`,
		`9223372036854775808`, `-9223372036854775809`, `123456789012345678901234567890`,
		`true`, `false`, `{}`, `[]`, `[1]`, `"unterminated`, `nul`, `nullx`,
	} {
		var id jsonrpc.ID
		if err := id.UnmarshalJSON([]byte(in)); err == nil {
			t.Errorf("UnmarshalJSON(%s) = %v, want error", in, id)
		}
	}
	// A long rejected id is truncated in the error message.
	var long jsonrpc.ID
	err := long.UnmarshalJSON([]byte(strings.Repeat("9", 200)))
	if err == nil || len(err.Error()) > 150 || !strings.Contains(err.Error(), "…") {
		t.Errorf("UnmarshalJSON(200 digits) error = %v, want a truncated message", err)
	}
	// Empty input (only reachable by calling UnmarshalJSON directly).
	var id jsonrpc.ID
	if err := id.UnmarshalJSON([]byte("  ")); err == nil {
		t.Errorf("UnmarshalJSON(blank) = nil error")
	}
}

// TestIDInMessages: ids survive a message round trip with their JSON type.
func TestIDInMessages(t *testing.T) {
	tests := []struct {
		in   string
		want jsonrpc.ID
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, jsonrpc.Int64ID(1)},
		{`{"jsonrpc":"2.0","id":"1","result":{}}`, jsonrpc.StringID("1")},
		{`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse"}}`, jsonrpc.ID{}},
		{`{"jsonrpc":"2.0","id":9223372036854775807,"result":{}}`, jsonrpc.Int64ID(math.MaxInt64)},
	}
	for _, tc := range tests {
		m, err := jsonrpc.DecodeMessage([]byte(tc.in))
		if err != nil {
			t.Fatalf("DecodeMessage(%s) error: %v", tc.in, err)
		}
		r := m.(*jsonrpc.Response)
		if r.ID != tc.want {
			t.Errorf("DecodeMessage(%s).ID = %v, want %v", tc.in, r.ID, tc.want)
		}
		b, err := jsonrpc.EncodeMessage(r)
		if err != nil || string(b) != tc.in {
			t.Errorf("EncodeMessage(DecodeMessage(%s)) = %s, %v", tc.in, b, err)
		}
	}
	for _, in := range []string{
		`{"jsonrpc":"2.0","id":1.0,"result":{}}`,
		`{"jsonrpc":"2.0","id":1e2,"method":"m"}`,
		`{"jsonrpc":"2.0","id":99999999999999999999,"method":"m"}`,
		`{"jsonrpc":"2.0","id":null,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":true,"method":"m"}`,
		`{"jsonrpc":"2.0","id":{},"result":{}}`,
	} {
		_, err := jsonrpc.DecodeMessage([]byte(in))
		if !errors.Is(err, jsonrpc.ErrInvalidRequest) {
			t.Errorf("DecodeMessage(%s) error = %v, want ErrInvalidRequest", in, err)
		}
	}
}
