package jsonrpc

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// This file holds DecodeMessage: a hand-rolled, validating scanner that
// walks the members of the top-level object once, remembers where the
// members it cares about are, and then builds the message with few
// allocations.
//
// The scanner accepts exactly what encoding/json accepts (json.Valid): the
// RFC 8259 grammar, invalid UTF-8 inside strings included, and nesting up to
// maxDepth. Members are matched to names the way encoding/json matches struct
// fields: exactly, or else case-insensitively (Unicode simple folding) after
// unescaping; of duplicate members the last one counts. The tests check all
// of this against the former encoding/json-based decoder, kept as
// decodeMessageReference in reference_test.go.

// maxDepth is the deepest nesting of objects and arrays DecodeMessage
// accepts, the top-level object counting as 1. It is the limit of
// encoding/json, so both accept the same documents.
const maxDepth = 10000

// syntaxError reports input that is not JSON.
type syntaxError struct {
	msg string
	off int // byte offset in the input
}

func (e *syntaxError) Error() string {
	return "invalid JSON: " + e.msg + " at offset " + strconv.Itoa(e.off)
}

// valueKind is the JSON type of a scanned value.
type valueKind uint8

const (
	kindAbsent valueKind = iota // no such member
	kindNull
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// Flags a scanned value carries.
const (
	// flagEscape: a string contains a backslash escape.
	flagEscape uint8 = 1 << iota
	// flagNonASCII: a string contains a byte >= 0x80 (maybe invalid UTF-8).
	flagNonASCII
	// flagFraction: a number has a fraction or an exponent.
	flagFraction
)

// span locates one JSON value in the input.
type span struct {
	start, end int // data[start:end] is the value, quotes included
	kind       valueKind
	flags      uint8
}

// content returns the bytes between the quotes of a string span.
func (s span) content(data []byte) []byte { return data[s.start+1 : s.end-1] }

// raw returns the bytes of the value.
func (s span) raw(data []byte) []byte { return data[s.start:s.end] }

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

func skipSpace(data []byte, i int) int {
	for i < len(data) && isSpace(data[i]) {
		i++
	}
	return i
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// errAt returns the syntax error for data[i]: an unexpected end when i is at
// or past the end, otherwise an unexpected character.
func errAt(data []byte, i int, context string) error {
	if i >= len(data) {
		return &syntaxError{msg: "unexpected end of input", off: len(data)}
	}
	return &syntaxError{msg: "invalid character " + strconv.QuoteRune(rune(data[i])) + " " + context, off: i}
}

// scanString scans the string literal that starts at data[i] == '"' and
// returns the index just past its closing quote.
func scanString(data []byte, i int) (end int, flags uint8, err error) {
	i++
	for {
		for i < len(data) && strClass[data[i]] == strPlain {
			i++
		}
		if i >= len(data) {
			return 0, 0, errAt(data, i, "")
		}
		switch strClass[data[i]] {
		case strQuote:
			return i + 1, flags, nil
		case strNonASCII:
			flags |= flagNonASCII
			i++
		case strControl:
			return 0, 0, errAt(data, i, "in string literal")
		case strEscape:
			flags |= flagEscape
			i++
			if i >= len(data) {
				return 0, 0, errAt(data, i, "")
			}
			switch data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				i++
				for k := 0; k < 4; k++ {
					if i >= len(data) || !isHex(data[i]) {
						return 0, 0, errAt(data, i, `in \u hexadecimal character escape`)
					}
					i++
				}
			default:
				return 0, 0, errAt(data, i, "in string escape code")
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
		return 0, 0, errAt(data, i, "")
	case data[i] == '0':
		i++
	case '1' <= data[i] && data[i] <= '9':
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	default:
		return 0, 0, errAt(data, i, "in numeric literal")
	}
	if i < len(data) && data[i] == '.' {
		flags |= flagFraction
		i++
		if i >= len(data) || !isDigit(data[i]) {
			return 0, 0, errAt(data, i, "after decimal point in numeric literal")
		}
		for i++; i < len(data) && isDigit(data[i]); i++ {
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		flags |= flagFraction
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= len(data) || !isDigit(data[i]) {
			return 0, 0, errAt(data, i, "in exponent of numeric literal")
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
			return 0, errAt(data, i+k, "in literal "+lit)
		}
	}
	return i + len(lit), nil
}

// scanScalar scans the string, number or literal at data[i], which the
// caller has checked is in range.
func scanScalar(data []byte, i int) (span, error) {
	s := span{start: i}
	var err error
	switch c := data[i]; {
	case c == '"':
		s.kind = kindString
		s.end, s.flags, err = scanString(data, i)
	case c == '-' || isDigit(c):
		s.kind = kindNumber
		s.end, s.flags, err = scanNumber(data, i)
	case c == 't':
		s.kind = kindBool
		s.end, err = scanLiteral(data, i, "true")
	case c == 'f':
		s.kind = kindBool
		s.end, err = scanLiteral(data, i, "false")
	case c == 'n':
		s.kind = kindNull
		s.end, err = scanLiteral(data, i, "null")
	default:
		return s, errAt(data, i, "looking for beginning of value")
	}
	return s, err
}

// bitStack records, for each open container, whether it is an object. The
// first 256 levels live in the array; deeper input (rare, and bounded by
// maxDepth) spills to the slice.
type bitStack struct {
	n     int
	small [4]uint64
	big   []uint64
}

func (s *bitStack) push(obj bool) {
	w, b := s.n/64, uint(s.n%64)
	s.n++
	var word *uint64
	if w < len(s.small) {
		word = &s.small[w]
	} else {
		w -= len(s.small)
		if w == len(s.big) {
			s.big = append(s.big, 0)
		}
		word = &s.big[w]
	}
	if obj {
		*word |= 1 << b
	} else {
		*word &^= 1 << b
	}
}

func (s *bitStack) top() bool {
	w, b := (s.n-1)/64, uint((s.n-1)%64)
	if w < len(s.small) {
		return s.small[w]&(1<<b) != 0
	}
	return s.big[w-len(s.small)]&(1<<b) != 0
}

func (s *bitStack) pop() { s.n-- }

// States of skipValue's walk through nested containers.
const (
	afterOpen  = iota // just after { or [: a close, or the first member/element
	wantKey           // after a comma in an object
	wantValue         // after a colon, or after a comma in an array
	afterValue        // after a member or element: a comma or a close
)

// skipValue scans the JSON value starting at data[i] (white space already
// skipped); depth is the nesting level a container there would have. It
// walks nested containers iteratively, so hostile nesting costs no stack.
func skipValue(data []byte, i, depth int) (span, error) {
	if i >= len(data) {
		return span{}, errAt(data, i, "")
	}
	c := data[i]
	if c != '{' && c != '[' {
		return scanScalar(data, i)
	}
	start := i
	var st bitStack
	state := wantValue
	for {
		i = skipSpace(data, i)
		if i >= len(data) {
			return span{}, errAt(data, i, "")
		}
		c = data[i]
		switch state {
		case afterOpen:
			if c == '}' && st.top() || c == ']' && !st.top() {
				i++
				st.pop()
				depth--
				state = afterValue
				break
			}
			if st.top() {
				state = wantKey
			} else {
				state = wantValue
			}
			continue
		case wantKey:
			if c != '"' {
				return span{}, errAt(data, i, "looking for beginning of object key string")
			}
			end, _, err := scanString(data, i)
			if err != nil {
				return span{}, err
			}
			i = skipSpace(data, end)
			if i >= len(data) || data[i] != ':' {
				return span{}, errAt(data, i, "after object key")
			}
			i++
			state = wantValue
		case wantValue:
			if c == '{' || c == '[' {
				if st.n > 0 {
					depth++
				}
				if depth > maxDepth {
					return span{}, &syntaxError{msg: "exceeded max depth", off: i}
				}
				st.push(c == '{')
				i++
				state = afterOpen
				continue
			}
			s, err := scanScalar(data, i)
			if err != nil {
				return span{}, err
			}
			i = s.end
			state = afterValue
		case afterValue:
			obj := st.top()
			switch {
			case c == ',':
				i++
				if obj {
					state = wantKey
				} else {
					state = wantValue
				}
			case obj && c == '}' || !obj && c == ']':
				i++
				st.pop()
				depth--
			case obj:
				return span{}, errAt(data, i, "after object key:value pair")
			default:
				return span{}, errAt(data, i, "after array element")
			}
		}
		if st.n == 0 {
			kind := kindArray
			if data[start] == '{' {
				kind = kindObject
			}
			return span{start: start, end: i, kind: kind}, nil
		}
	}
}

// objectReader walks the members of one object, validating as it goes.
type objectReader struct {
	data    []byte
	i       int // next byte to read
	depth   int // nesting level of the object itself
	started bool
}

// next returns the next member's key and value; ok is false after the
// closing brace, with r.i just past it.
func (r *objectReader) next() (key, val span, ok bool, err error) {
	data := r.data
	i := skipSpace(data, r.i)
	if !r.started {
		// The caller has checked data[i] == '{'.
		r.started = true
		i = skipSpace(data, i+1)
		if i < len(data) && data[i] == '}' {
			r.i = i + 1
			return span{}, span{}, false, nil
		}
	} else {
		switch {
		case i < len(data) && data[i] == '}':
			r.i = i + 1
			return span{}, span{}, false, nil
		case i < len(data) && data[i] == ',':
			i = skipSpace(data, i+1)
		default:
			return span{}, span{}, false, errAt(data, i, "after object key:value pair")
		}
	}
	if i >= len(data) || data[i] != '"' {
		return span{}, span{}, false, errAt(data, i, "looking for beginning of object key string")
	}
	key = span{start: i, kind: kindString}
	key.end, key.flags, err = scanString(data, i)
	if err != nil {
		return span{}, span{}, false, err
	}
	i = skipSpace(data, key.end)
	if i >= len(data) || data[i] != ':' {
		return span{}, span{}, false, errAt(data, i, "after object key")
	}
	val, err = skipValue(data, skipSpace(data, i+1), r.depth+1)
	if err != nil {
		return span{}, span{}, false, err
	}
	r.i = val.end
	return key, val, true, nil
}

// validate reports whether data is exactly one JSON value (no surrounding
// white space to skip: DecodeMessage has trimmed it).
func validate(data []byte) error {
	v, err := skipValue(data, 0, 1)
	if err != nil {
		return err
	}
	if v.end != len(data) {
		return errAt(data, v.end, "after top-level value")
	}
	return nil
}

// Member names DecodeMessage looks for.
const (
	memberOther = iota
	memberJSONRPC
	memberID
	memberMethod
	memberParams
	memberResult
	memberError
	memberCode
	memberMessage
	memberData
)

var (
	topMembers   = [...]string{memberJSONRPC: "jsonrpc", memberID: "id", memberMethod: "method", memberParams: "params", memberResult: "result", memberError: "error"}
	errorMembers = [...]string{memberCode: "code", memberMessage: "message", memberData: "data"}
)

// matchKey returns which of names (indexed by member constant) the key
// names, the way encoding/json matches a struct field: exactly, or else
// equal under Unicode simple case folding after unescaping.
func matchKey(data []byte, key span, names []string) int {
	c := key.content(data)
	for m, name := range names {
		if name != "" && string(c) == name {
			return m
		}
	}
	if key.flags&flagEscape != 0 {
		// A rune that folds to an ASCII letter is at most 6 bytes escaped,
		// and the names are at most 7 letters: longer keys cannot match.
		if len(c) > 64 {
			return memberOther
		}
		var buf [64]byte
		c = appendUnquoted(buf[:0], c)
	} else if key.flags&flagNonASCII == 0 {
		// Plain ASCII that did not match exactly can still match in
		// another case.
		for m, name := range names {
			if name != "" && len(c) == len(name) && asciiEqualFold(c, name) {
				return m
			}
		}
		return memberOther
	}
	for m, name := range names {
		if name != "" && bytes.EqualFold(c, []byte(name)) {
			return m
		}
	}
	return memberOther
}

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

// plainString reports whether a string's content is its value byte for
// byte: no escapes and valid UTF-8.
func plainString(data []byte, s span) bool {
	if s.flags&flagEscape != 0 {
		return false
	}
	return s.flags&flagNonASCII == 0 || utf8.Valid(s.content(data))
}

// stringIs reports whether the string value at s equals want, which is
// short ASCII.
func stringIs(data []byte, s span, want string) bool {
	c := s.content(data)
	if s.flags&flagEscape == 0 {
		return string(c) == want
	}
	if len(c) > 6*len(want) || len(c) > 64 {
		return false // every escape yields at least one byte per six
	}
	var buf [64]byte
	return string(appendUnquoted(buf[:0], c)) == want
}

// unquotedLen bounds the length of a string's value (0 for an absent
// one): escapes only shrink, but each byte of invalid UTF-8 becomes the
// 3-byte U+FFFD.
func unquotedLen(data []byte, s span) int {
	if s.kind != kindString {
		return 0
	}
	n := len(s.content(data))
	if plainString(data, s) {
		return n
	}
	return 3 * n
}

// writeString writes the value of the string at s to b.
func writeString(b *strings.Builder, data []byte, s span) {
	if plainString(data, s) {
		b.Write(s.content(data))
		return
	}
	var buf [256]byte
	b.Write(appendUnquoted(buf[:0], s.content(data)))
}

// appendUnquoted appends the value of the string literal content c (the
// bytes between the quotes, already validated) to dst, as encoding/json
// decodes it: invalid UTF-8 and unpaired surrogates become U+FFFD.
func appendUnquoted(dst, c []byte) []byte {
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

// parseInt returns the integer value of a validated JSON number, or false
// when it has a fraction or exponent or does not fit in an int64 (the
// numbers strconv.ParseInt rejects).
func parseInt(data []byte, s span) (int64, bool) {
	if s.flags&flagFraction != 0 {
		return 0, false
	}
	b := s.raw(data)
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

// members is what DecodeMessage learned from the top-level object: where
// the last occurrence of each member is.
type members struct {
	jsonrpc, id, method, params, result, err span
	// badVersion: some "jsonrpc" member was neither a string nor null
	// (encoding/json failed on it even when a later one was right).
	badVersion bool
	// own: the caller gave up data, so raw members may alias it
	// ([DecodeMessageOwned]) instead of being copied.
	own bool
}

// rawValue returns the raw bytes of s for the message: a copy, or with
// m.own a subslice of data whose capacity ends with the value, so that an
// append to it cannot overwrite the rest of the input.
func (m *members) rawValue(data []byte, s span) []byte {
	if m.own {
		return data[s.start:s.end:s.end]
	}
	return clone(s.raw(data))
}

// DecodeMessage decodes one JSON-RPC 2.0 message. Params, results and error
// data stay raw. Input that is not JSON fails with a [*DecodeError] matching
// [ErrParse]; JSON that is not a valid message (batch arrays included)
// fails with one matching [ErrInvalidRequest].
//
// DecodeMessage never retains data: the message holds copies, so the caller
// may reuse the buffer as soon as DecodeMessage returns. It accepts the JSON
// that encoding/json accepts, matches member names as encoding/json does
// (case-insensitively when no name matches exactly), and takes the last of
// duplicate members.
func DecodeMessage(data []byte) (Message, error) {
	return decodeMessage(data, false)
}

// DecodeMessageOwned is [DecodeMessage] for a buffer the caller hands
// over: it takes ownership of data. The raw params, result and error data
// of the returned message alias data instead of copying it, so the caller
// must not modify or reuse data afterwards (after an error too). It
// accepts exactly the input DecodeMessage accepts and returns an equal
// message and the same errors; it saves the copy of the raw member, which
// matters for large results. Method names, ids and error messages are
// strings and never alias data.
func DecodeMessageOwned(data []byte) (Message, error) {
	return decodeMessage(data, true)
}

// decodeMessage implements DecodeMessage (own false) and
// DecodeMessageOwned (own true).
func decodeMessage(data []byte, own bool) (Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, &DecodeError{Reason: "empty input", Err: errEmpty}
	}
	if data[0] != '{' {
		if err := validate(data); err != nil {
			return nil, &DecodeError{Reason: "not JSON", Err: err}
		}
		if data[0] == '[' {
			return nil, &DecodeError{Reason: "batches are not supported"}
		}
		return nil, &DecodeError{Reason: "not a JSON object"}
	}
	m := members{own: own}
	r := objectReader{data: data, depth: 1}
	for {
		key, val, ok, err := r.next()
		if err != nil {
			return nil, &DecodeError{Reason: "not JSON", Err: err}
		}
		if !ok {
			break
		}
		switch matchKey(data, key, topMembers[:]) {
		case memberJSONRPC:
			if val.kind != kindString && val.kind != kindNull {
				m.badVersion = true
			}
			m.jsonrpc = val
		case memberID:
			m.id = val
		case memberMethod:
			m.method = val
		case memberParams:
			m.params = val
		case memberResult:
			m.result = val
		case memberError:
			m.err = val
		}
	}
	if r.i != len(data) { // data is trimmed: anything left is garbage
		return nil, &DecodeError{Reason: "not JSON", Err: errAt(data, r.i, "after top-level value")}
	}
	if m.badVersion || m.jsonrpc.kind != kindString || !stringIs(data, m.jsonrpc, Version) {
		return nil, &DecodeError{Reason: `missing or wrong "jsonrpc" version`}
	}
	if m.method.kind != kindAbsent {
		return m.request(data)
	}
	return m.response(data)
}

// request builds a request: at most three allocations (the Request, the
// params copy, and one string for an uncommon method name and a string id).
func (m *members) request(data []byte) (Message, error) {
	if m.method.kind != kindString {
		return nil, &DecodeError{Reason: "method is not a string"}
	}
	if m.result.kind != kindAbsent || m.err.kind != kindAbsent {
		return nil, &DecodeError{Reason: "request carries result or error"}
	}
	if m.method.end-m.method.start == 2 { // escapes never yield ""
		return nil, &DecodeError{Reason: "empty method"}
	}
	req := new(Request)
	var idStr span
	if m.id.kind != kindAbsent {
		if m.id.kind == kindNull {
			return nil, &DecodeError{Reason: "request id is null"}
		}
		id, s, err := parseIDSpan(data, m.id)
		if err != nil {
			return nil, err
		}
		req.ID, idStr = id, s
	}
	if m.params.kind != kindAbsent && m.params.kind != kindNull {
		if m.params.kind != kindObject && m.params.kind != kindArray {
			return nil, &DecodeError{Reason: "params is neither object nor array"}
		}
		req.Params = m.rawValue(data, m.params)
	}
	method, known := "", false
	if plainString(data, m.method) {
		method, known = commonMethods[string(m.method.content(data))]
	}
	if !known || idStr.kind != kindAbsent {
		// One allocation holds both strings.
		var b strings.Builder
		n := unquotedLen(data, idStr)
		if !known {
			n += unquotedLen(data, m.method)
		}
		b.Grow(n)
		if !known {
			writeString(&b, data, m.method)
		}
		k := b.Len()
		if idStr.kind != kindAbsent {
			writeString(&b, data, idStr)
		}
		s := b.String()
		if !known {
			method = s[:k]
		}
		if idStr.kind != kindAbsent {
			req.ID = StringID(s[k:])
		}
	}
	req.Method = method
	return req, nil
}

// responseWithError lets an error response and its error share one allocation.
type responseWithError struct {
	resp Response
	err  Error
}

// response builds a response: at most three allocations (the Response with
// its Error, the result or error data copy, and one string for a string id
// and the error message).
func (m *members) response(data []byte) (Message, error) {
	if m.id.kind == kindAbsent {
		return nil, &DecodeError{Reason: "message has neither method nor id"}
	}
	var id ID
	var idStr span
	if m.id.kind != kindNull {
		var err error
		if id, idStr, err = parseIDSpan(data, m.id); err != nil {
			return nil, err
		}
	}
	if (m.result.kind != kindAbsent) == (m.err.kind != kindAbsent) {
		return nil, &DecodeError{Reason: "response must carry exactly one of result and error"}
	}
	if m.err.kind != kindAbsent {
		return m.errorResponse(data, id, idStr)
	}
	if !id.IsValid() {
		return nil, &DecodeError{Reason: "success response id is null"}
	}
	resp := &Response{ID: id, Result: m.rawValue(data, m.result)}
	if idStr.kind != kindAbsent {
		var b strings.Builder
		b.Grow(unquotedLen(data, idStr))
		writeString(&b, data, idStr)
		resp.ID = StringID(b.String())
	}
	return resp, nil
}

// errorResponse decodes the error object the way encoding/json decoded it
// into Error: every "code" must be null or an integer, the last one not
// null; every "message" a string or null (null leaves it as it was); the
// last "data" counts, null meaning none.
func (m *members) errorResponse(data []byte, id ID, idStr span) (Message, error) {
	if m.err.kind != kindObject {
		return nil, errMalformedError()
	}
	var code int64
	var codeSet, bad bool
	var msg, errData span
	r := objectReader{data: data, i: m.err.start, depth: 2}
	for {
		key, val, ok, err := r.next()
		if err != nil {
			return nil, errMalformedError() // unreachable: the input was validated
		}
		if !ok {
			break
		}
		switch matchKey(data, key, errorMembers[:]) {
		case memberCode:
			switch val.kind {
			case kindNull:
				codeSet = false
			case kindNumber:
				n, ok := parseInt(data, val)
				bad = bad || !ok
				code, codeSet = n, true
			default:
				bad = true
			}
		case memberMessage:
			switch val.kind {
			case kindString:
				msg = val
			case kindNull:
			default:
				bad = true
			}
		case memberData:
			errData = val
		}
	}
	if bad || !codeSet {
		return nil, errMalformedError()
	}
	p := &responseWithError{resp: Response{ID: id}, err: Error{Code: code}}
	p.resp.Error = &p.err
	if errData.kind != kindAbsent && errData.kind != kindNull {
		p.err.Data = m.rawValue(data, errData)
	}
	if msg.kind != kindAbsent || idStr.kind != kindAbsent {
		var b strings.Builder
		b.Grow(unquotedLen(data, msg) + unquotedLen(data, idStr))
		if msg.kind != kindAbsent {
			writeString(&b, data, msg)
		}
		k := b.Len()
		if idStr.kind != kindAbsent {
			writeString(&b, data, idStr)
		}
		s := b.String()
		p.err.Message = s[:k]
		if idStr.kind != kindAbsent {
			p.resp.ID = StringID(s[k:])
		}
	}
	return &p.resp, nil
}

func errMalformedError() error { return &DecodeError{Reason: "malformed error object"} }

// parseIDSpan reads a non-null id. An integer id is returned whole; for a
// string id it returns the span, for the caller to turn into a string
// together with its others.
func parseIDSpan(data []byte, s span) (ID, span, error) {
	switch s.kind {
	case kindString:
		return ID{kind: idString}, s, nil
	case kindNumber:
		if n, ok := parseInt(data, s); ok {
			return Int64ID(n), span{}, nil
		}
	}
	return ID{}, span{}, &DecodeError{Reason: "jsonrpc: id " + truncate(s.raw(data)) + " is not an integer or string"}
}

// clone returns a copy of b whose capacity is its length.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}
