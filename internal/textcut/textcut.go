// Package textcut cuts text that errors and logs quote from a peer, so
// that a long quote stays short and a cut never splits a character (which
// would print as U+FFFD, or make the text invalid UTF-8).
package textcut

import "unicode/utf8"

// Cut returns s when it is at most n bytes long, else its longest prefix
// of at most n bytes that ends between characters, followed by "…".
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:boundary(s, n)] + "…"
}

// CutBytes is Cut of b, converting only what it keeps.
func CutBytes(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	return string(b[:boundary(b, n)]) + "…"
}

// boundary returns n, or the start of the character that straddles it: at
// most utf8.UTFMax-1 bytes back (past that, s is not UTF-8 there and n is
// as good a place as any).
func boundary[T string | []byte](s T, n int) int {
	for i := n; i > n-utf8.UTFMax && i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return n
}
