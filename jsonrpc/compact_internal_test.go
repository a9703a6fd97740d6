package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestAppendCompact: white space anywhere, in any lane, is removed; JSON
// without any is appended as it is; invalid JSON is appended as it is.
func TestAppendCompact(t *testing.T) {
	for _, raw := range []string{
		`{"a":1}`, `{"name":"x","arguments":{"text":"hello"}}`,
		`{"a": 1}`, "{\"a\":1,\n\"b\":[1,\t2]}", `{"text":"two words"}`,
		"{\"abcdefgh\":\"ijklmnop\",\r\n \"q\":1}", "{\"bad\":\"\x01\"}",
	} {
		want := []byte(raw)
		var buf bytes.Buffer
		if json.Compact(&buf, want) == nil {
			want = buf.Bytes()
		}
		if got := appendCompact([]byte("x"), []byte(raw)); !bytes.Equal(got, append([]byte("x"), want...)) {
			t.Errorf("appendCompact(%q) = %q, want x%q", raw, got, want)
		}
	}
}
