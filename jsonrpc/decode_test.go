package jsonrpc_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// checkAgainstReference decodes data with DecodeMessage and with the former
// encoding/json-based decoder and fails unless both fail with the same
// error class or both succeed with equal messages. It scribbles over the
// input after decoding, so a message that kept pointing into it would
// differ. It also checks that DecodeMessageOwned returns what DecodeMessage
// returns (see checkOwned).
func checkAgainstReference(t *testing.T, data []byte) {
	t.Helper()
	in := bytes.Clone(data)
	got, gotErr := jsonrpc.DecodeMessage(in)
	for i := range in {
		in[i] = '#'
	}
	checkOwned(t, data, got, gotErr)
	want, wantErr := jsonrpc.DecodeMessageReference(data)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("input %q:\nDecodeMessage = %#v, %v\nreference     = %#v, %v", data, got, gotErr, want, wantErr)
	}
	if wantErr != nil {
		for _, class := range []*jsonrpc.Error{jsonrpc.ErrParse, jsonrpc.ErrInvalidRequest} {
			if errors.Is(gotErr, class) != errors.Is(wantErr, class) {
				t.Fatalf("input %q: DecodeMessage error %v, reference error %v: differ on errors.Is %v", data, gotErr, wantErr, class)
			}
		}
		if got != nil {
			t.Fatalf("input %q: DecodeMessage returned a message with its error", data)
		}
		return
	}
	if diff := cmp.Diff(want, got, rawCompact, idCmp); diff != "" {
		t.Fatalf("input %q: messages differ (-reference +DecodeMessage):\n%s", data, diff)
	}
}

// checkOwned decodes a copy of data with DecodeMessageOwned and fails
// unless it returns what DecodeMessage returned (got, gotErr): an equal
// message, raw members byte for byte, or an error with the same text and
// class.
func checkOwned(t *testing.T, data []byte, got jsonrpc.Message, gotErr error) {
	t.Helper()
	owned, ownedErr := jsonrpc.DecodeMessageOwned(bytes.Clone(data))
	if (gotErr == nil) != (ownedErr == nil) {
		t.Fatalf("input %q:\nDecodeMessage      = %#v, %v\nDecodeMessageOwned = %#v, %v", data, got, gotErr, owned, ownedErr)
	}
	if gotErr != nil {
		if gotErr.Error() != ownedErr.Error() {
			t.Fatalf("input %q: DecodeMessage error %q, DecodeMessageOwned error %q", data, gotErr, ownedErr)
		}
		for _, class := range []*jsonrpc.Error{jsonrpc.ErrParse, jsonrpc.ErrInvalidRequest} {
			if errors.Is(gotErr, class) != errors.Is(ownedErr, class) {
				t.Fatalf("input %q: DecodeMessage error %v, DecodeMessageOwned error %v: differ on errors.Is %v", data, gotErr, ownedErr, class)
			}
		}
		if owned != nil {
			t.Fatalf("input %q: DecodeMessageOwned returned a message with its error", data)
		}
		return
	}
	if diff := cmp.Diff(got, owned, idCmp); diff != "" {
		t.Fatalf("input %q: messages differ (-DecodeMessage +DecodeMessageOwned):\n%s", data, diff)
	}
}

// differentialInputs are inputs where a hand-rolled decoder is likely to
// part ways with encoding/json.
func differentialInputs() []string {
	in := []string{
		// Member names: exact, other case, Unicode folding, escaped.
		`{"JSONRPC":"2.0","Method":"m","ID":1,"PARAMS":[]}`,
		`{"Jsonrpc":"2.0","Id":1,"Result":{}}`,
		`{"jsonrpc":"2.0","id":1,"ERROR":{"CODE":1,"Message":"m","DATA":[1]}}`,
		`{"jſonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","method":"m","paramſ":{"a":1}}`,
		`{"jsonrpc":"2.0","id":1,"reſult":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"meſſage":"m"}}`,
		`{"\u006asonrpc":"2.0","\u006dethod":"m"}`,
		`{"j\u017fonrpc":"2.0","method":"m"}`,
		`{"J\u017FONRPC":"2.0","METHOD":"m"}`,
		`{"jsonrpc":"2.0","ıd":1,"method":"m"}`,
		`{"jsonrpc":"2.0","İd":1,"method":"m"}`,
		`{"jsonrpc":"2.0","\u0131d":1,"method":"m"}`,
		`{"jsonrpc":"2.0","\u0130d":1,"method":"m"}`,
		`{"jsonrpc":"2.0","\u212ad":1,"method":"m"}`,
		`{"jsonrpc":"2.0","id\u0000":1,"method":"m"}`,
		"{\"jsonrpc\":\"2.0\",\"i\xffd\":1,\"method\":\"m\"}",
		"{\"jsonrpc\":\"2.0\",\"\\u0069\xff\":1,\"method\":\"m\"}",
		`{"jsonrpc":"2.0","\ud800id":1,"method":"m"}`,
		`{"jsonrpc":"2.0","method":"m","":1}`,
		`{"jsonrpc":"2.0","method":"m","` + strings.Repeat(`\u0070`, 11) + `":1}`,
		`{"jsonrpc":"2.0","method":"m","Xarams":1,"PARAMX":2,"idd":3}`,
		`{"jsonrpc":"2.0","method":"m","\u0070\u0061\u0072\u0061\u006d\u0073":[1]}`,
		`{"jsonrpc":"2.0","method":"m","\u0070\u0061\u0072\u0061\u006d\u0073\u0073":[1]}`,
		// Duplicate members: the last counts, with encoding/json's
		// quirks for null.
		`{"jsonrpc":"2.0","jsonrpc":null,"method":"m"}`,
		`{"jsonrpc":null,"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":1,"jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","jsonrpc":{},"method":"m"}`,
		`{"jsonrpc":"1.0","jsonrpc":"2.0","method":"m"}`,
		`{"jsonrpc":"2.0","method":"a","method":"b"}`,
		`{"jsonrpc":"2.0","method":1,"method":"b"}`,
		`{"jsonrpc":"2.0","method":"a","method":null}`,
		`{"jsonrpc":"2.0","id":1,"id":"x","method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"id":null,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1.5,"id":2,"method":"m"}`,
		`{"jsonrpc":"2.0","method":"m","params":[],"params":null}`,
		`{"jsonrpc":"2.0","method":"m","params":null,"params":{}}`,
		`{"jsonrpc":"2.0","method":"m","params":1,"params":{}}`,
		`{"jsonrpc":"2.0","id":1,"result":1,"result":{"a":2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1},"error":{"code":2,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1},"error":null}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"code":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":null,"code":3}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.5,"code":2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"1","code":2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":true,"code":2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":2,"message":"a","message":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":2,"message":"a","message":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":2,"message":1,"message":"b"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":2,"data":1,"data":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":2,"data":null,"data":[1]}}`,
		// Error objects.
		`{"jsonrpc":"2.0","id":1,"error":{"code":-0}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775808,"message":""}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775807}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":9223372036854775808}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-9223372036854775809}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1E2}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1.0}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":[1]}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":{}}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":null}}`,
		`{"jsonrpc":"2.0","id":1,"error":{}}`,
		`{"jsonrpc":"2.0","id":1,"error":[]}`,
		`{"jsonrpc":"2.0","id":1,"error":1}`,
		`{"jsonrpc":"2.0","id":1,"error":true}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"\ud83d\ude00\u00e9\n"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"s\\u00e9\",\"error\":{\"code\":1,\"message\":\"\xff\",\"extra\":[{}]}}",
		`{"jsonrpc":"2.0","id":"i","error":{"code":1}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":"2.0","id":true,"error":{"code":1,"message":"m"}}`,
		// Versions.
		`{"jsonrpc":"2\u002e0","method":"m"}`,
		`{"jsonrpc":"\u0032\u002E\u0030","method":"m"}`,
		`{"jsonrpc":"2.0 ","method":"m"}`,
		`{"jsonrpc":"2.00","method":"m"}`,
		`{"jsonrpc":"\u0032\u002e\u0030\u0030","method":"m"}`,
		"{\"jsonrpc\":\"2.0\xff\",\"method\":\"m\"}",
		`{"jsonrpc":"\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032\u0032","method":"m"}`,
		`{"jsonrpc":true,"method":"m"}`,
		`{"jsonrpc":["2.0"],"method":"m"}`,
		// Strings: escapes, surrogates, invalid UTF-8.
		`{"jsonrpc":"2.0","method":"\ud800"}`,
		`{"jsonrpc":"2.0","method":"\ud800\udc00"}`,
		`{"jsonrpc":"2.0","method":"\udc00\ud800"}`,
		`{"jsonrpc":"2.0","method":"\ud800\u0041"}`,
		`{"jsonrpc":"2.0","method":"\ud800\ud800\udc00"}`,
		`{"jsonrpc":"2.0","method":"\ud800x"}`,
		`{"jsonrpc":"2.0","method":"\ud800\n"}`,
		`{"jsonrpc":"2.0","method":"x\uDBFF\uDFFF"}`,
		`{"jsonrpc":"2.0","method":"\u0000"}`,
		`{"jsonrpc":"2.0","method":"\/\"\\\b\f\n\r\t"}`,
		`{"jsonrpc":"2.0","method":"\'"}`,
		`{"jsonrpc":"2.0","method":"\x41"}`,
		`{"jsonrpc":"2.0","method":"\u12"}`,
		`{"jsonrpc":"2.0","method":"\u12G4"}`,
		`{"jsonrpc":"2.0","method":"\uABCDef"}`,
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\tb\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"a\x7fb\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xed\xa0\x80\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"\xc0\xaf\",\"id\":\"\xf4\x90\x80\x80\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"é\",\"id\":\"é\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"id\":\"\\u00e9\xff\"}",
		`{"jsonrpc":"2.0","method":"tools/call","id":""}`,
		`{"jsonrpc":"2.0","method":"tools\/call","id":"1"}`,
		`{"jsonrpc":"2.0","method":"","id":1}`,
		`{"jsonrpc":"2.0","id":"\u00e9","result":{}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":\"\xe9\",\"result\":{}}",
		// Numbers.
		`{"jsonrpc":"2.0","id":-0,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-,"method":"m"}`,
		`{"jsonrpc":"2.0","id":01,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1.,"method":"m"}`,
		`{"jsonrpc":"2.0","id":.5,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e+,"method":"m"}`,
		`{"jsonrpc":"2.0","id":1e-7,"method":"m"}`,
		`{"jsonrpc":"2.0","id":+1,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}`,
		`{"jsonrpc":"2.0","id":9223372036854775807,"method":"m"}`,
		`{"jsonrpc":"2.0","id":9223372036854775808,"method":"m"}`,
		`{"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"}`,
		`{"jsonrpc":"2.0","id":12345678901234567890123,"method":"m"}`,
		`{"jsonrpc":"2.0","id":0,"method":"m","params":[0,-0,1.5e10,-2E-3,0.0]}`,
		`{"jsonrpc":"2.0","id":0,"method":"m","params":[00]}`,
		`{"jsonrpc":"2.0","id":0,"method":"m","params":[1.e3]}`,
		`{"jsonrpc":"2.0","id":0,"method":"m","params":[-]}`,
		`{"jsonrpc":"2.0","id":0,"method":"m","params":[1e]}`,
		// Literals and structure.
		`{"jsonrpc":"2.0","id":true,"method":"m"}`,
		`{"jsonrpc":"2.0","id":{},"method":"m"}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[true,false,null]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[tru]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[nulll]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[True]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1,]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[,1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1 2]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a" 1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{1:1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[1}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":[[[[{"a":[{}]}]]]]}`,
		`{"jsonrpc":"2.0","id":1,"method":"m","params":{ "a" : [ ] , "b" : { } }}`,
		`{"jsonrpc":"2.0","method":"m",}`,
		`{"jsonrpc":"2.0","method":"m" "id":1}`,
		`{"jsonrpc":"2.0","method"}`,
		`{"jsonrpc":"2.0","method":}`,
		`{,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","method":"m"}}`,
		`{"jsonrpc":"2.0","method":"m"},`,
		`{"jsonrpc":"2.0","method":"m"} {}`,
		`{"jsonrpc":"2.0","method":"m"`,
		`{"jsonrpc":"2.0","method":"m`,
		`{"jsonrpc":"2.0","method":"m\`,
		`{"jsonrpc":"2.0","method":"m\u00`,
		`{"jsonrpc":"2.0","method":"m","params":[`,
		`{"jsonrpc":"2.0","method":"m","params":{"a"`,
		`{"jsonrpc":"2.0","method":"m","params":{"a":`,
		`{"jsonrpc":"2.0","method":"m","params":{"a":1`,
		`{"jsonrpc":"2.0","method":"m","params":-`,
		`{"jsonrpc":"2.0","method":"m","params":t`,
		`{"jsonrpc":"2.0","method":"m","params":"`,
		`{`, `{"`, `{"a`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{}`, `{ }`, `{}x`, `{]`, `{"a":1]`,
		// Top level other than an object.
		`[]`, `[`, `[1,]`, `[1 2]`, `[{}]`, `"x"`, `"x`, `1`, `-1.5e3`, `1x`, `01`, `null`, `nul`, `true`, `truee`, `false`, `x`, `]`, `}`, `:`, `,`,
		`[[[]]]`, `[[[]]`, `[{"a":[1,{"b":null}]}]`, `[{"a"}]`, `["\u12"]`,
		// White space, inside JSON and Unicode white space that
		// bytes.TrimSpace removes around the message.
		"\t\r\n {\"jsonrpc\" :\"2.0\" ,\n\"method\":\t\"m\"\r} \n",
		"\v{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\f",
		"\u00a0{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\u0085",
		"\u2028{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\u3000",
		"{\"jsonrpc\":\"2.0\",\"method\":\"m\"\v}",
		"{\"jsonrpc\":\"2.0\",\u00a0\"method\":\"m\"}",
		"\ufeff{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
		"\x00{\"jsonrpc\":\"2.0\",\"method\":\"m\"}",
		"{\"jsonrpc\":\"2.0\",\"method\":\"m\"}\x00",
		"", " ", "\v", "\u00a0",
	}
	return in
}

// TestDecodeMessageMatchesReference runs the differential check on inputs
// chosen to find disagreements, and on random mutations of them and of the
// fuzz seeds.
func TestDecodeMessageMatchesReference(t *testing.T) {
	inputs := differentialInputs()
	for _, s := range inputs {
		t.Run("", func(t *testing.T) { checkAgainstReference(t, []byte(s)) })
	}
	inputs = append(inputs,
		`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2}}}`,
		`{"jsonrpc":"2.0","id":"a\u00e9","result":{"content":[{"type":"text","text":"3"}],"isError":false}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad","data":{"x":[1.5e3,true,null,"s"]}}}`,
	)
	rng := rand.New(rand.NewPCG(7, 11))
	alphabet := []byte(`{}[]":,\ue-+.0123456789tfnaljsonrpcidmethodparamsresulterrorcodemessagedata` + " \t\n\x00\x7f\xff\xc3")
	for n := 0; n < 20000; n++ {
		b := []byte(inputs[rng.IntN(len(inputs))])
		for k := 1 + rng.IntN(3); k > 0; k-- {
			switch i := rng.IntN(len(b) + 1); rng.IntN(3) {
			case 0: // insert
				b = append(b[:i], append([]byte{alphabet[rng.IntN(len(alphabet))]}, b[i:]...)...)
			case 1: // delete
				if i < len(b) {
					b = append(b[:i], b[i+1:]...)
				}
			default: // replace
				if i < len(b) {
					b[i] = alphabet[rng.IntN(len(alphabet))]
				}
			}
		}
		checkAgainstReference(t, b)
	}
}

// TestDecodeMessageDepth: nesting up to encoding/json's limit of 10000
// (the top-level object counting as one) is accepted, deeper nesting is a
// parse error, and neither exhausts the stack.
func TestDecodeMessageDepth(t *testing.T) {
	// deep nests n copies of open…close between prefix and suffix.
	deep := func(prefix, open, inner, close, suffix string, n int) []byte {
		return []byte(prefix + strings.Repeat(open, n) + inner + strings.Repeat(close, n) + suffix)
	}
	const req = `{"jsonrpc":"2.0","method":"m","params":`
	tests := []struct {
		name string
		in   []byte
		want error // nil: decodes
	}{
		// The top-level object is level 1, so params may nest 9999 deep.
		{"params arrays at the limit", deep(req, "[", "", "]", "}", 9999), nil},
		{"params arrays past the limit", deep(req, "[", "", "]", "}", 10000), jsonrpc.ErrParse},
		{"params objects at the limit", deep(req, `{"a":`, "{}", "}", "}", 9998), nil},
		{"params objects past the limit", deep(req, `{"a":`, "{}", "}", "}", 9999), jsonrpc.ErrParse},
		{"result mixed at the limit", deep(`{"jsonrpc":"2.0","id":1,"result":[`, `[{"a":`, "0", "}]", "]}", 4999), nil},
		{"result mixed past the limit", deep(`{"jsonrpc":"2.0","id":1,"result":[`, `[{"a":`, "0", "}]", "]}", 5000), jsonrpc.ErrParse},
		{"error data at the limit", deep(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"data":`, "[", "", "]", "}}", 9998), nil},
		{"error data past the limit", deep(`{"jsonrpc":"2.0","id":1,"error":{"code":1,"data":`, "[", "", "]", "}}", 9999), jsonrpc.ErrParse},
		{"top-level arrays at the limit", deep("", "[", "", "]", "", 10000), jsonrpc.ErrInvalidRequest},
		{"top-level arrays past the limit", deep("", "[", "", "]", "", 10001), jsonrpc.ErrParse},
		{"unclosed and very deep", []byte(req + strings.Repeat("[", 1<<20)), jsonrpc.ErrParse},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := jsonrpc.DecodeMessage(tc.in)
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("DecodeMessage error: %v", err)
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Fatalf("DecodeMessage error = %v, want errors.Is %v", err, tc.want)
			}
			checkAgainstReference(t, tc.in)
		})
	}
}

// TestDecodeMessageDoesNotRetainInput: the caller may reuse its buffer.
func TestDecodeMessageDoesNotRetainInput(t *testing.T) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":"req-1","method":"custom/method","params":{"a":[1,2,3]}}`,
		`{"jsonrpc":"2.0","id":"r\u00e9","result":{"b":"c"}}`,
		`{"jsonrpc":"2.0","id":"e","error":{"code":-32000,"message":"boom","data":{"d":1}}}`,
	} {
		buf := []byte(s)
		m, err := jsonrpc.DecodeMessage(buf)
		if err != nil {
			t.Fatal(err)
		}
		before, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		for i := range buf {
			buf[i] = 'z'
		}
		after, err := jsonrpc.EncodeMessage(m)
		if err != nil || !bytes.Equal(before, after) {
			t.Errorf("message changed when the input was overwritten: %s then %s (%v)", before, after, err)
		}
	}
}

// TestDecodeMessageAllocations pins the allocation budget of the hot path:
// at most three allocations for a request, a success response and an error
// response, whatever the kind of id and method.
func TestDecodeMessageAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	tests := []struct {
		in   string
		want float64
	}{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add"}}`, 2},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, 2},
		{`{"jsonrpc":"2.0","method":"notifications/initialized"}`, 1},
		{`{"jsonrpc":"2.0","id":"abc","method":"custom/method","params":{"name":"add"}}`, 3},
		{`{"jsonrpc":"2.0","id":"a\u00e9","method":"custom/m\u00e9thod","params":[1]}`, 3},
		{`{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`, 2},
		{`{"jsonrpc":"2.0","id":"abc","result":{"content":[]}}`, 3},
		{`{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"no such method","data":{"m":"x"}}}`, 3},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no such method"}}`, 2},
	}
	for _, tc := range tests {
		data := []byte(tc.in)
		got := testing.AllocsPerRun(100, func() {
			if _, err := jsonrpc.DecodeMessage(data); err != nil {
				t.Fatal(err)
			}
		})
		if got > tc.want {
			t.Errorf("DecodeMessage(%s): %v allocations, want at most %v", tc.in, got, tc.want)
		}
	}
}

// TestDecodeMessageOwnedAllocations: DecodeMessageOwned does not copy the
// raw member, so it needs at most two allocations (the message, and one
// string for a string id, an uncommon method name and an error message),
// however large the result.
func TestDecodeMessageOwnedAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	big := `{"jsonrpc":"2.0","id":"abc","result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}`
	tests := []struct {
		in   string
		want float64
	}{
		{`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add"}}`, 1},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`, 1},
		{`{"jsonrpc":"2.0","id":"a\u00e9","method":"custom/m\u00e9thod","params":[1]}`, 2},
		{`{"jsonrpc":"2.0","id":42,"result":{"content":[]}}`, 1},
		{`{"jsonrpc":"2.0","id":"abc","result":{"content":[]}}`, 2},
		{big, 2},
		{`{"jsonrpc":"2.0","id":"abc","error":{"code":-32601,"message":"no such method","data":{"m":"x"}}}`, 2},
	}
	for _, tc := range tests {
		// Each run gets its own buffer, made outside the measured
		// function: DecodeMessageOwned keeps it.
		bufs := make(chan []byte, 101)
		for range cap(bufs) {
			bufs <- []byte(tc.in)
		}
		var bytesBefore, bytesAfter runtime.MemStats
		runtime.ReadMemStats(&bytesBefore)
		got := testing.AllocsPerRun(100, func() {
			if _, err := jsonrpc.DecodeMessageOwned(<-bufs); err != nil {
				t.Fatal(err)
			}
		})
		runtime.ReadMemStats(&bytesAfter)
		if got > tc.want {
			t.Errorf("DecodeMessageOwned(%.60s…): %v allocations, want at most %v", tc.in, got, tc.want)
		}
		// No copy of the raw result: 101 decodes of the 1 MiB message
		// must allocate far less than one copy of it.
		if perRun := (bytesAfter.TotalAlloc - bytesBefore.TotalAlloc) / 101; perRun > 4096 {
			t.Errorf("DecodeMessageOwned(%.60s…): %d bytes allocated per call, want no copy of the input", tc.in, perRun)
		}
	}
}

// TestDecodeMessageOwnedAliases: the raw members of a message decoded by
// DecodeMessageOwned are the input's bytes, not a copy, and their capacity
// ends with them, so appending to one does not overwrite the rest of the
// input; the strings (ids, method, error message) never alias it.
func TestDecodeMessageOwnedAliases(t *testing.T) {
	tests := []struct {
		in   string
		raw  string // the raw member, as found in the input
		get  func(jsonrpc.Message) []byte
		strs func(jsonrpc.Message) []string
		want []string
	}{
		{`{"jsonrpc":"2.0","id":"req-1","method":"custom/method","params":{"a":[1,2,3]},"x":1}`, `{"a":[1,2,3]}`,
			func(m jsonrpc.Message) []byte { return m.(*jsonrpc.Request).Params },
			func(m jsonrpc.Message) []string { r := m.(*jsonrpc.Request); return []string{r.ID.String(), r.Method} },
			[]string{`"req-1"`, "custom/method"}},
		{` {"jsonrpc":"2.0","id":"r","result":{"b":"c"},"x":1} `, `{"b":"c"}`,
			func(m jsonrpc.Message) []byte { return m.(*jsonrpc.Response).Result },
			func(m jsonrpc.Message) []string { return []string{m.(*jsonrpc.Response).ID.String()} },
			[]string{`"r"`}},
		{`{"jsonrpc":"2.0","id":"e","error":{"code":-32000,"message":"boom","data":{"d":1}},"x":1}`, `{"d":1}`,
			func(m jsonrpc.Message) []byte { return m.(*jsonrpc.Response).Error.Data },
			func(m jsonrpc.Message) []string {
				r := m.(*jsonrpc.Response)
				return []string{r.ID.String(), r.Error.Message}
			},
			[]string{`"e"`, "boom"}},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			buf := []byte(tc.in)
			off := bytes.Index(buf, []byte(tc.raw))
			m, err := jsonrpc.DecodeMessageOwned(buf)
			if err != nil {
				t.Fatal(err)
			}
			raw := tc.get(m)
			if string(raw) != tc.raw {
				t.Fatalf("raw member = %s, want %s", raw, tc.raw)
			}
			if &raw[0] != &buf[off] {
				t.Errorf("raw member is a copy, want it to alias the input")
			}
			if cap(raw) != len(raw) {
				t.Errorf("raw member has capacity %d beyond its length %d", cap(raw), len(raw))
			}
			_ = append(raw, "zzzzzz"...)
			if !bytes.Equal(buf, []byte(tc.in)) {
				t.Errorf("appending to the raw member changed the input: %s", buf)
			}
			for i := range buf {
				buf[i] = '#'
			}
			if diff := cmp.Diff(tc.want, tc.strs(m)); diff != "" {
				t.Errorf("strings changed when the input was overwritten (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDecodeMessageStringValues: method names, string ids and error
// messages decode to what encoding/json decodes them to, on the fast path
// (plain strings, common methods) and the slow one (escapes, invalid
// UTF-8).
func TestDecodeMessageStringValues(t *testing.T) {
	for _, s := range interestingStrings() {
		q, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(q, &want); err != nil {
			t.Fatal(err)
		}
		raw := fmt.Sprintf(`"%s"`, s) // unescaped: valid only for some s
		for _, in := range []string{
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":"m%s"}`, q, q[1:]),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"error":{"code":1,"message":%s}}`, q, q),
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%s}`, raw, raw),
		} {
			checkAgainstReference(t, []byte(in))
		}
	}
}
