// Package jsonscan scans the top-level members of a JSON object without
// decoding it, for the hot paths that need one member only (a result's
// resultType, a request's name or uri). The text must already be known
// valid JSON (json.Valid, which does not allocate); nothing here validates.
//
// # Concurrency
//
// The functions are pure and safe to call concurrently.
package jsonscan

import (
	"bytes"
	"encoding/json"
)

// EachMember calls fn with the quoted key and the raw value of every
// top-level member of obj, a valid JSON object, in order, until fn returns
// false.
func EachMember(obj []byte, fn func(key, val []byte) bool) {
	i := skipSpace(obj, 1)
	for i < len(obj) && obj[i] == '"' {
		kend := skipString(obj, i)
		key := obj[i:kend]
		v := skipSpace(obj, skipSpace(obj, kend)+1) // past ':'
		vend := skipValue(obj, v)
		if !fn(key, obj[v:vend]) {
			return
		}
		i = skipSpace(obj, vend)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string that starts at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return len(b)
}

// skipValue returns the index after the value that starts at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// KeyIs reports whether the quoted key matches name as encoding/json
// matches a struct field's name: after unquoting, case-insensitively
// (bytes.EqualFold). name is ASCII.
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
	var u string
	if json.Unmarshal(quoted, &u) != nil {
		return false
	}
	return bytes.EqualFold([]byte(u), []byte(name))
}
