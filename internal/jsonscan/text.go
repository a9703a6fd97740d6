package jsonscan

import (
	"bytes"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// asciiEqualFold reports whether b equals the lower-case ASCII name s in
// any case; len(b) == len(s).
func asciiEqualFold(b []byte, s string) bool {
	for i := range len(b) {
		x := b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if x != s[i] {
			return false
		}
	}
	return true
}

// PlainString reports whether a string's content is its value byte for
// byte: no escapes and valid UTF-8.
func PlainString(data []byte, s Span) bool {
	if s.Flags&FlagEscape != 0 {
		return false
	}
	return s.Flags&FlagNonASCII == 0 || utf8.Valid(s.Content(data))
}

// StringIs reports whether the string value at s equals want, which is
// short ASCII.
func StringIs(data []byte, s Span, want string) bool {
	c := s.Content(data)
	if s.Flags&FlagEscape == 0 {
		return string(c) == want
	}
	if len(c) > 6*len(want) || len(c) > 64 {
		return false // every escape yields at least one byte per six
	}
	var buf [64]byte
	return string(AppendUnquoted(buf[:0], c)) == want
}

// UnquotedLen bounds the length of a string's value (0 for an absent
// one): escapes only shrink, but each byte of invalid UTF-8 becomes the
// 3-byte U+FFFD.
func UnquotedLen(data []byte, s Span) int {
	if s.Kind != KindString {
		return 0
	}
	n := len(s.Content(data))
	if PlainString(data, s) {
		return n
	}
	return 3 * n
}

// WriteString writes the value of the string at s to b.
func WriteString(b *strings.Builder, data []byte, s Span) {
	if PlainString(data, s) {
		b.Write(s.Content(data))
		return
	}
	var buf [256]byte
	b.Write(AppendUnquoted(buf[:0], s.Content(data)))
}

// AppendUnquoted appends the value of the string literal content c (the
// bytes between the quotes, already validated) to dst, as encoding/json
// decodes it: invalid UTF-8 and unpaired surrogates become U+FFFD.
func AppendUnquoted(dst, c []byte) []byte {
	for i := 0; i < len(c); {
		switch ch := c[i]; {
		case ch == '\\':
			switch c[i+1] {
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'n':
				dst = append(dst, '\n')
			case 'r':
				dst = append(dst, '\r')
			case 't':
				dst = append(dst, '\t')
			case 'u':
				r := hex4(c[i+2:])
				i += 6
				if utf16.IsSurrogate(r) {
					if i+6 <= len(c) && c[i] == '\\' && c[i+1] == 'u' {
						if dec := utf16.DecodeRune(r, hex4(c[i+2:])); dec != utf8.RuneError {
							dst = utf8.AppendRune(dst, dec)
							i += 6
							continue
						}
					}
					r = utf8.RuneError
				}
				dst = utf8.AppendRune(dst, r)
				continue
			default: // " \ /
				dst = append(dst, c[i+1])
			}
			i += 2
		case ch < utf8.RuneSelf:
			dst = append(dst, ch)
			i++
		default:
			r, size := utf8.DecodeRune(c[i:])
			dst = utf8.AppendRune(dst, r)
			i += size
		}
	}
	return dst
}

// hex4 decodes the four hexadecimal digits at the start of b (validated).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r<<4 | rune(c)
	}
	return r
}

// ParseInt returns the integer value of a validated JSON number, or false
// when it has a fraction or exponent or does not fit in an int64 (the
// numbers strconv.ParseInt rejects).
func ParseInt(data []byte, s Span) (int64, bool) {
	if s.Flags&FlagFraction != 0 {
		return 0, false
	}
	b := s.Raw(data)
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 19 { // no leading zeros in JSON: 20 digits overflow
		return 0, false
	}
	var u uint64
	for _, c := range b {
		u = u*10 + uint64(c-'0') // 19 digits fit in a uint64
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true
	}
	if u > 1<<63-1 {
		return 0, false
	}
	return int64(u), true
}

// MatchKey returns which of names (indexed by member constant) the key
// names, the way encoding/json matches a struct field: exactly, or else
// equal under Unicode simple case folding after unescaping.
func MatchKey(data []byte, key Span, names []string) int {
	c := key.Content(data)
	for m, name := range names {
		if name != "" && string(c) == name {
			return m
		}
	}
	if key.Flags&FlagEscape != 0 {
		// A rune that folds to an ASCII letter is at most 6 bytes escaped,
		// and the names are at most 7 letters: longer keys cannot match.
		if len(c) > 64 {
			return -1
		}
		var buf [64]byte
		c = AppendUnquoted(buf[:0], c)
	} else if key.Flags&FlagNonASCII == 0 {
		// Plain ASCII that did not match exactly can still match in
		// another case.
		for m, name := range names {
			if name != "" && len(c) == len(name) && asciiEqualFold(c, name) {
				return m
			}
		}
		return -1
	}
	for m, name := range names {
		if name != "" && bytes.EqualFold(c, []byte(name)) {
			return m
		}
	}
	return -1
}
