package jsonrpc_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/google/go-cmp/cmp"
)

// FuzzDecodeMessage checks that DecodeMessage agrees with the former
// encoding/json-based decoder (same error class, or equal messages; see
// checkAgainstReference) and does not retain its input, that
// DecodeMessageOwned returns the same messages and errors, that it never
// panics, that every failure is a *DecodeError matching exactly one of ErrParse and
// ErrInvalidRequest, and that every decoded message re-encodes to valid
// JSON that decodes to the same message and encodes to the same bytes.
// The seed corpus is in testdata/fuzz/FuzzDecodeMessage.
func FuzzDecodeMessage(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"c"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
		`{"jsonrpc":"2.0","id":"a","result":{"x":[1,2,{"y":null}]}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error","data":"\u2028"}}`,
	} {
		f.Add([]byte(s))
	}
	for _, s := range differentialInputs() {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstReference(t, data)
		m, err := jsonrpc.DecodeMessage(data)
		if err != nil {
			var de *jsonrpc.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("DecodeMessage error %T %v, want *DecodeError", err, err)
			}
			if errors.Is(err, jsonrpc.ErrParse) == errors.Is(err, jsonrpc.ErrInvalidRequest) {
				t.Fatalf("DecodeMessage error %v matches both or neither of ErrParse and ErrInvalidRequest", err)
			}
			if m != nil {
				t.Fatalf("DecodeMessage returned a message with its error")
			}
			return
		}
		b1, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatalf("EncodeMessage(%#v) error: %v", m, err)
		}
		if bytes.ContainsAny(b1, "\n\r") {
			t.Fatalf("EncodeMessage produced a raw line break: %q", b1)
		}
		m2, err := jsonrpc.DecodeMessage(b1)
		if err != nil {
			t.Fatalf("DecodeMessage(EncodeMessage(%q) = %q) error: %v", data, b1, err)
		}
		if diff := cmp.Diff(m, m2, rawCompact, idCmp); diff != "" {
			t.Fatalf("re-decoded message differs (-first +second):\n%s\ninput %q\nencoded %q", diff, data, b1)
		}
		b2, err := jsonrpc.EncodeMessage(m2)
		if err != nil || !bytes.Equal(b1, b2) {
			t.Fatalf("encoding is not stable: %q then %q (%v)", b1, b2, err)
		}
	})
}
