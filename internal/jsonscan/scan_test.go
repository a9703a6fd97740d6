package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"strings"
	"testing"
)

// skipPlainByByte returns the index of the first byte at or after
// data[i] that is not plain inside a string (a quote, a backslash, a
// control character), and whether it skipped bytes >= 0x80: the reference
// scanString's word-at-a-time loop must agree with.
func skipPlainByByte(data []byte, i int) (int, bool) {
	nonASCII := false
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c < 0x20 || c == '"' || c == '\\':
			return i, nonASCII
		case c >= 0x80:
			nonASCII = true
		}
	}
	return i, nonASCII
}

// TestSpecialLanes puts every byte value in every lane of a word of plain
// text, alone and with a second byte of every class in a higher lane:
// the lowest lane flagged must be the first byte that is not plain
// ASCII.
func TestSpecialLanes(t *testing.T) {
	plain := []byte("abcdefgh")
	for lane := range 8 {
		for c := range 256 {
			for _, later := range []int{-1, 0x00, '"', '\\', 0x1f, 0x7f, 0x80, 0xff} {
				for after := lane + 1; after < 8 || after == lane+1; after++ {
					w := bytes.Clone(plain)
					w[lane] = byte(c)
					if later >= 0 && after < 8 {
						w[after] = byte(later)
					}
					want := 8
					for k, b := range w {
						if b < 0x20 || b == '"' || b == '\\' || b >= 0x80 {
							want = k
							break
						}
					}
					got := 8
					if m := specialLanes(binary.LittleEndian.Uint64(w)); m != 0 {
						got = bits.TrailingZeros64(m) >> 3
					}
					if got != want {
						t.Fatalf("specialLanes(%q): first lane %d, want %d", w, got, want)
					}
				}
			}
		}
	}
}

// TestScanStringLanes scans strings whose special byte (a quote, an
// escape, a control character, a non-ASCII byte) falls at every offset
// across and after the words scanString reads eight bytes at a time.
func TestScanStringLanes(t *testing.T) {
	for n := range 26 {
		for _, special := range []string{`"`, `\n"`, `\u00e9"`, "\xc3\xa9\"", "\x01\""} {
			data := []byte(`"` + strings.Repeat("x", n) + special + ` tail`)
			end, flags, err := scanString(data, 0)
			lit := []byte(`"` + strings.Repeat("x", n) + special)
			valid := json.Valid(lit)
			if (err == nil) != valid {
				t.Fatalf("scanString(%q): err %v, want valid %v", data, err, valid)
			}
			if err != nil {
				continue
			}
			if end != len(lit) {
				t.Errorf("scanString(%q) ends at %d, want %d", data, end, len(lit))
			}
			if got, want := flags&FlagNonASCII != 0, !isASCII(lit); got != want {
				t.Errorf("scanString(%q) non-ASCII flag %v, want %v", data, got, want)
			}
			if got, want := flags&FlagEscape != 0, bytes.IndexByte(lit, '\\') >= 0; got != want {
				t.Errorf("scanString(%q) escape flag %v, want %v", data, got, want)
			}
		}
	}
}

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
					if got := HasSpaceOrControl(b); got != want(b) {
						t.Fatalf("HasSpaceOrControl(%q) = %v, want %v", b, got, !got)
					}
				}
			}
		}
	}
}

// FuzzScanString checks a string literal's scan against encoding/json:
// where it ends, whether it is valid, and its flags.
func FuzzScanString(f *testing.F) {
	for _, s := range []string{`"plain"`, `"a\"b"`, `"\u00e9t\u00e9 and more text"`, "\"caf\xc3\xa9 \xe2\x82\xac\"", "\"bad\x01\"", `"unterminated`, "\"\xff\xfe long enough to take words\"", `"\\\\\\"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := append([]byte{'"'}, body...)
		end, flags, err := scanString(data, 0)
		i, _ := skipPlainByByte(data, 1)
		for i < len(data) && data[i] == '\\' {
			i, _ = skipPlainByByte(data, i+2)
		}
		closed := i < len(data) && data[i] == '"'
		valid := closed && json.Valid(data[:i+1])
		if (err == nil) != valid {
			t.Fatalf("scanString(%q): err %v, want valid %v", data, err, valid)
		}
		if err != nil {
			return
		}
		if end != i+1 {
			t.Fatalf("scanString(%q) ends at %d, want %d", data, end, i+1)
		}
		lit := data[1:i]
		if got, want := flags&FlagNonASCII != 0, !isASCII(lit); got != want {
			t.Fatalf("scanString(%q) non-ASCII flag %v, want %v", data, got, want)
		}
		if got, want := flags&FlagEscape != 0, bytes.IndexByte(lit, '\\') >= 0; got != want {
			t.Fatalf("scanString(%q) escape flag %v, want %v", data, got, want)
		}
	})
}

func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}
