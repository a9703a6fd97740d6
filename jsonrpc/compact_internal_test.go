package jsonrpc

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestHasSpaceOrControl puts every byte value at every offset of inputs
// of 1 to 20 bytes (so in each lane of the eight-byte reads and in the
// tail after them), with a second byte after it or not, against the
// byte-at-a-time definition.
func TestHasSpaceOrControl(t *testing.T) {
	want := func(b []byte) bool {
		for _, c := range b {
			if c <= ' ' {
				return true
			}
		}
		return false
	}
	for n := 1; n <= 20; n++ {
		for pos := range n {
			for c := range 256 {
				for _, later := range []int{-1, 0x00, ' ', 0x21, 0x80, 0xff} {
					b := bytes.Repeat([]byte{'a'}, n)
					b[pos] = byte(c)
					if later >= 0 && pos+1 < n {
						b[n-1] = byte(later)
					}
					if got := hasSpaceOrControl(b); got != want(b) {
						t.Fatalf("hasSpaceOrControl(%q) = %v, want %v", b, got, !got)
					}
				}
			}
		}
	}
}

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
