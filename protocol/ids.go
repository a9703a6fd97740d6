package protocol

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"strconv"
)

// scalarID is a JSON value that is either a string or an integer, with the
// two kept apart: 1 and "1" are different values. It is the shared
// implementation of [RequestID] and [ProgressToken].
type scalarID struct {
	kind uint8 // 0 absent, 1 string, 2 integer
	str  string
	num  int64
}

const (
	scalarNone uint8 = iota
	scalarString
	scalarInt
)

// IsZero reports whether the value is absent. It makes the `omitzero`
// JSON option leave an absent value out.
func (v scalarID) IsZero() bool { return v.kind == scalarNone }

// IsValid reports whether the value is present (a string or an integer).
func (v scalarID) IsValid() bool { return v.kind != scalarNone }

// IsString reports whether the value is a string.
func (v scalarID) IsString() bool { return v.kind == scalarString }

// Str returns the string value and whether the value is a string.
func (v scalarID) Str() (string, bool) { return v.str, v.kind == scalarString }

// Int64 returns the integer value and whether the value is an integer.
func (v scalarID) Int64() (int64, bool) { return v.num, v.kind == scalarInt }

// Raw returns the value as a string, an int64, or nil when absent.
func (v scalarID) Raw() any {
	switch v.kind {
	case scalarString:
		return v.str
	case scalarInt:
		return v.num
	}
	return nil
}

// String formats the value for logs: strings quoted, integers plain,
// absent as "<none>".
func (v scalarID) String() string {
	switch v.kind {
	case scalarString:
		return strconv.Quote(v.str)
	case scalarInt:
		return strconv.FormatInt(v.num, 10)
	}
	return "<none>"
}

// MarshalJSON encodes a string or an integer; an absent value encodes as
// null (use `omitzero` on fields to leave it out).
func (v scalarID) MarshalJSON() ([]byte, error) {
	switch v.kind {
	case scalarString:
		return json.Marshal(v.str)
	case scalarInt:
		return strconv.AppendInt(nil, v.num, 10), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON accepts a JSON string or an integer that fits in int64.
// null decodes to the absent value. Anything else (fractions, exponents,
// objects) is an error: such a value could not be echoed back exactly.
func (v *scalarID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case len(data) == 0:
		return fmt.Errorf("protocol: empty id")
	case string(data) == "null":
		*v = scalarID{}
		return nil
	case data[0] == '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return fmt.Errorf("protocol: invalid string id: %v", err)
		}
		*v = scalarID{kind: scalarString, str: s}
		return nil
	}
	n, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		return fmt.Errorf("protocol: id %s is not a string or an integer", textcut.CutBytes(data, 64))
	}
	*v = scalarID{kind: scalarInt, num: n}
	return nil
}

// RequestID is a JSON-RPC request id as it appears inside MCP payloads: in
// notifications/cancelled's requestId and in the
// io.modelcontextprotocol/subscriptionId _meta key. It is a string or an
// integer, and 1 ≠ "1". The zero RequestID is "absent". (The jsonrpc
// package has its own ID type for the envelope; convert through
// [RequestID.Raw] or JSON.)
//
// All versions.
type RequestID struct{ scalarID }

// StringRequestID returns a string request id.
func StringRequestID(s string) RequestID {
	return RequestID{scalarID{kind: scalarString, str: s}}
}

// IntRequestID returns an integer request id.
func IntRequestID(n int64) RequestID {
	return RequestID{scalarID{kind: scalarInt, num: n}}
}

// ProgressToken is the progressToken of a request's _meta and of
// notifications/progress: a string or an integer, and 1 ≠ "1". The zero
// ProgressToken is "absent".
//
// All versions.
type ProgressToken struct{ scalarID }

// StringProgressToken returns a string progress token.
func StringProgressToken(s string) ProgressToken {
	return ProgressToken{scalarID{kind: scalarString, str: s}}
}

// IntProgressToken returns an integer progress token.
func IntProgressToken(n int64) ProgressToken {
	return ProgressToken{scalarID{kind: scalarInt, num: n}}
}
