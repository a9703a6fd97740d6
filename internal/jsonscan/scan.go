package jsonscan

import (
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
)

// The scanner accepts exactly what encoding/json accepts (json.Valid): the
// RFC 8259 grammar, invalid UTF-8 inside strings included, and nesting up to
// MaxDepth. This file scans the scalars; value.go the containers; text.go
// reads strings, numbers and keys out of the spans it returns.

// MaxDepth is the deepest nesting of objects and arrays the scanner
// accepts, the top-level object counting as 1. It is the limit of
// encoding/json, so both accept the same documents.
const MaxDepth = 10000

// syntaxError reports input that is not JSON.
type syntaxError struct {
	msg string
	off int // byte offset in the input
}

func (e *syntaxError) Error() string {
	return "invalid JSON: " + e.msg + " at offset " + strconv.Itoa(e.off)
}

// Kind is the JSON type of a scanned value.
type Kind uint8

const (
	KindAbsent Kind = iota // no such member
	KindNull
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// Flags a scanned value carries.
const (
	// FlagEscape: a string contains a backslash escape.
	FlagEscape uint8 = 1 << iota
	// FlagNonASCII: a string contains a byte >= 0x80 (maybe invalid UTF-8).
	FlagNonASCII
	// FlagFraction: a number has a fraction or an exponent.
	FlagFraction
)

// Span locates one JSON value in the input.
type Span struct {
	Start, End int // data[Start:End] is the value, quotes included
	Kind       Kind
	Flags      uint8 // FlagEscape, FlagNonASCII, FlagFraction
}

// Content returns the bytes between the quotes of a string Span.
func (s Span) Content(data []byte) []byte { return data[s.Start+1 : s.End-1] }

// Raw returns the bytes of the value.
func (s Span) Raw(data []byte) []byte { return data[s.Start:s.End] }

// Byte classes inside a string literal.
const (
	strPlain    = iota // printable ASCII other than " and \
	strQuote           // "
	strEscape          // \
	strControl         // < 0x20, not allowed unescaped
	strNonASCII        // >= 0x80
)

var strClass = func() (t [256]uint8) {
	for c := range t {
		switch {
		case c < 0x20:
			t[c] = strControl
		case c == '"':
			t[c] = strQuote
		case c == '\\':
			t[c] = strEscape
		case c >= utf8.RuneSelf:
			t[c] = strNonASCII
		}
	}
	return t
}()

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func SkipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// ErrAt returns the syntax error for data[i]: an unexpected end when i is at
// or past the end, otherwise an unexpected character.
func ErrAt(data []byte, i int, context string) error {
	if i >= len(data) {
		return &syntaxError{msg: "unexpected end of input", off: len(data)}
	}
	return &syntaxError{msg: "invalid character " + strconv.QuoteRune(rune(data[i])) + " " + context, off: i}
}

// Masks of scanString's word-at-a-time test: a byte of every lane.
const (
	lanes01 = 0x0101010101010101
	lanes80 = 0x8080808080808080
)

// specialLanes returns the lanes (bytes, lowest address first) of x that are
// not plain ASCII inside a string, each as its high bit: a quote, a
// backslash, a control character or a byte >= 0x80. It uses the classic
// "has a zero (or smaller) byte" tests, which are exact for the lowest
// lane they flag, the only one its callers use.
func specialLanes(x uint64) uint64 {
	q := x ^ ('"' * lanes01)
	b := x ^ ('\\' * lanes01)
	return ((x-0x20*lanes01)&^x | (q-lanes01)&^q | (b-lanes01)&^b | x) & lanes80
}

// HasSpaceOrControl reports whether data has a byte <= ' ': white space,
// or a control character, which valid JSON has only as white space (so
// for valid JSON this is "has white space"). It reads eight bytes at a
// time; jsonrpc asks it of every request's params before compacting them.
func HasSpaceOrControl(data []byte) bool {
	i := 0
	for ; i+8 <= len(data); i += 8 {
		x := binary.LittleEndian.Uint64(data[i:])
		// A lane's high bit is set when its byte is < 0x21 (and not >= 0x80).
		if (x-0x21*lanes01)&^x&lanes80 != 0 {
			return true
		}
	}
	for ; i < len(data); i++ {
		if data[i] <= ' ' {
			return true
		}
	}
	return false
}

// scanString scans the string literal that starts at data[i] == '"' and
// returns the index just past its closing quote.
func scanString(data []byte, i int) (end int, flags uint8, err error) {
	i++
	for {
		// Strings are most of a JSON text's bytes: skip plain ones eight
		// at a time while eight are left, then one at a time.
		for i+8 <= len(data) {
			if m := specialLanes(binary.LittleEndian.Uint64(data[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				break
			}
			i += 8
		}
		for i < len(data) && strClass[data[i]] == strPlain {
			i++
		}
		if i >= len(data) {
			return 0, 0, ErrAt(data, i, "")
		}
		switch strClass[data[i]] {
		case strQuote:
			return i + 1, flags, nil
		case strNonASCII:
			flags |= FlagNonASCII
			i++
		case strControl:
			return 0, 0, ErrAt(data, i, "in string literal")
		case strEscape:
			flags |= FlagEscape
			i++
			if i >= len(data) {
				return 0, 0, ErrAt(data, i, "")
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i >= len(data) || !isHex(data[i]) {
						return 0, 0, ErrAt(data, i, `in \u hexadecimal character escape`)
					}
					i++
				}
			default:
				return 0, 0, ErrAt(data, i, "in string escape code")
			}
		}
	}
}

// scanNumber scans the number that starts at data[i] and returns the index
// just past it. What follows is the caller's to check.
func scanNumber(data []byte, i int) (end int, flags uint8, err error) {
	if data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return 0, 0, ErrAt(data, i, "")
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	default:
		return 0, 0, ErrAt(data, i, "in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		flags |= FlagFraction
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return 0, 0, ErrAt(data, i, "after decimal point in numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		flags |= FlagFraction
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return 0, 0, ErrAt(data, i, "in exponent of numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	return i, flags, nil
}

// scanLiteral scans true, false or null at data[i].
func scanLiteral(data []byte, i int, lit string) (int, error) {
	for k := 0; k < len(lit); k++ {
		if i+k >= len(data) || data[i+k] != lit[k] {
			return 0, ErrAt(data, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

// scanScalar scans the string, number or literal at data[i], which the
// caller has checked is in range.
func scanScalar(data []byte, i int) (Span, error) {
	s := Span{Start: i}
	var err error
	switch c := data[i]; {
	case c == '"':
		s.Kind = KindString
		s.End, s.Flags, err = scanString(data, i)
	case c == '-' || isDigit(c):
		s.Kind = KindNumber
		s.End, s.Flags, err = scanNumber(data, i)
	case c == 't':
		s.Kind = KindBool
		s.End, err = scanLiteral(data, i, "true")
	case c == 'f':
		s.Kind = KindBool
		s.End, err = scanLiteral(data, i, "false")
	case c == 'n':
		s.Kind = KindNull
		s.End, err = scanLiteral(data, i, "null")
	default:
		return s, ErrAt(data, i, "looking for beginning of value")
	}
	return s, err
}
