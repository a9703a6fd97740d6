package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"ab€", 3, "ab…"},   // € is 3 bytes: cut before it
		{"ab€d", 5, "ab€…"}, // the cut falls after it
		{"a😀b", 3, "a…"},    // inside a 4-byte character
		{"\xff\xff\xff\xff\xff\xff", 2, "\xff\xff…"},
		{"", 0, ""},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
		if got := CutBytes([]byte(tc.s), tc.n); got != tc.want {
			t.Errorf("CutBytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
	long := strings.Repeat("é", 200)
	for n := range 10 {
		if got := Cut(long, 100+n); !utf8.ValidString(got) || len(got) > 100+n+len("…") {
			t.Errorf("Cut(é×200, %d) = %q: not valid UTF-8 or too long", 100+n, got)
		}
	}
}
