// Package jsonscan is the project's one JSON scanner: a validating scanner
// that walks the members of an object without decoding it and locates each
// value as a [Span], for the hot paths that need a few members only
// (jsonrpc's message decoder, a result's resultType, a request's name or
// uri, the _meta of params). It accepts exactly what encoding/json accepts
// and walks nested containers without recursion, so hostile nesting costs
// no stack.
//
// # Concurrency
//
// The functions are pure and safe to call concurrently.
package jsonscan

import "bytes"

// EachMember calls fn with the quoted key and the raw value of every
// top-level member of obj, a JSON object, in order, until fn returns
// false. It stops silently at the first syntax error: callers that must
// tell invalid input apart check it first (json.Valid) or use
// [ObjectReader].
func EachMember(obj []byte, fn func(key, val []byte) bool) {
	r := ObjectReader{Data: obj, I: SkipSpace(obj, 0), Depth: 1}
	if r.I >= len(obj) || obj[r.I] != '{' {
		return
	}
	for {
		key, val, ok, err := r.Next()
		if err != nil || !ok || !fn(key.Raw(obj), val.Raw(obj)) {
			return
		}
	}
}

// KeyIs reports whether the quoted key matches name as encoding/json
// matches a struct field's name: after unquoting, case-insensitively
// (Unicode simple folding). name is ASCII.
func KeyIs(quoted []byte, name string) bool {
	s := quoted[1 : len(quoted)-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return bytes.EqualFold(s, []byte(name))
	}
	// A folded ASCII character is at most 3 bytes of UTF-8, spelled with
	// at most two 6-byte escapes: anything longer cannot match.
	if len(s) > 12*len(name) {
		return false
	}
	var buf [64]byte
	return bytes.EqualFold(AppendUnquoted(buf[:0], s), []byte(name))
}

// Member finds the first top-level member of the JSON object obj whose key
// is exactly name, compared in its raw (escaped) form, and returns the span
// of its value; found is false when there is none. It validates what it
// walks and fails with a syntax error when obj is not an object or breaks
// the grammar before the member.
func Member(obj []byte, name string) (val Span, found bool, err error) {
	r := ObjectReader{Data: obj, I: SkipSpace(obj, 0), Depth: 1}
	if r.I >= len(obj) || obj[r.I] != '{' {
		return Span{}, false, ErrAt(obj, r.I, "looking for beginning of object")
	}
	for {
		key, val, ok, err := r.Next()
		if err != nil || !ok {
			return Span{}, false, err
		}
		if string(key.Content(obj)) == name {
			return val, true, nil
		}
	}
}

// IsSyntaxError reports whether err is one of the scanner's syntax errors.
func IsSyntaxError(err error) bool {
	_, ok := err.(*syntaxError)
	return ok
}

// LastMemberFold returns the span of the value of the last top-level
// member of the JSON object obj whose key matches name the way
// encoding/json matches a struct field ([KeyIs]), which is the member
// encoding/json would decode; the span's Kind is [KindAbsent] when there is
// none. It validates the whole of obj, which must be exactly one object
// (no surrounding white space), and returns a syntax error otherwise.
func LastMemberFold(obj []byte, name string) (Span, error) {
	if len(obj) == 0 || obj[0] != '{' {
		return Span{}, ErrAt(obj, 0, "looking for beginning of object")
	}
	r := ObjectReader{Data: obj, Depth: 1}
	var found Span
	for {
		key, val, ok, err := r.Next()
		if err != nil {
			return Span{}, err
		}
		if !ok {
			break
		}
		if KeyIs(key.Raw(obj), name) {
			found = val
		}
	}
	if r.I != len(obj) {
		return Span{}, ErrAt(obj, r.I, "after top-level value")
	}
	return found, nil
}
