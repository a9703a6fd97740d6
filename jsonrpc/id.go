package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"strconv"
)

// idKind tells which JSON type an [ID] holds.
type idKind uint8

const (
	idNone idKind = iota
	idInt
	idString
)

// ID is a JSON-RPC request id: a string or an integer, never null.
//
// The zero ID is "no id": it marks a notification, and it is what an error
// response carries when the request's id could not be read. IDs are
// comparable with ==, and the integer 1 never equals the string "1".
type ID struct {
	kind idKind
	num  int64
	str  string
}

// Int64ID returns the integer id n.
func Int64ID(n int64) ID { return ID{kind: idInt, num: n} }

// StringID returns the string id s.
func StringID(s string) ID { return ID{kind: idString, str: s} }

// IsValid reports whether id holds a string or an integer.
func (id ID) IsValid() bool { return id.kind != idNone }

// IsString reports whether id holds a string.
func (id ID) IsString() bool { return id.kind == idString }

// Int64 returns the integer value and whether id is an integer id.
func (id ID) Int64() (int64, bool) { return id.num, id.kind == idInt }

// Str returns the string value and whether id is a string id.
func (id ID) Str() (string, bool) { return id.str, id.kind == idString }

// Raw returns the id as the Go value it has in JSON: an int64, a string, or
// nil for the zero ID.
func (id ID) Raw() any {
	switch id.kind {
	case idInt:
		return id.num
	case idString:
		return id.str
	}
	return nil
}

// String formats id for logs: integers as digits, strings quoted, the zero
// ID as "<none>".
func (id ID) String() string {
	switch id.kind {
	case idInt:
		return strconv.FormatInt(id.num, 10)
	case idString:
		return strconv.Quote(id.str)
	}
	return "<none>"
}

// AppendJSON appends the JSON encoding of id to b (null for the zero ID).
func (id ID) AppendJSON(b []byte) []byte {
	switch id.kind {
	case idInt:
		return strconv.AppendInt(b, id.num, 10)
	case idString:
		return appendString(b, id.str)
	}
	return append(b, "null"...)
}

// MarshalJSON implements [json.Marshaler].
func (id ID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// UnmarshalJSON implements [json.Unmarshaler]. It accepts a string, an
// integer (a number without fraction or exponent that fits in int64), or
// null (the zero ID).
func (id *ID) UnmarshalJSON(data []byte) error {
	v, err := parseID(data)
	if err != nil {
		return err
	}
	*id = v
	return nil
}

func parseID(data []byte) (ID, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return ID{}, fmt.Errorf("jsonrpc: empty id")
	}
	switch data[0] {
	case 'n':
		if string(data) == "null" {
			return ID{}, nil
		}
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return ID{}, fmt.Errorf("jsonrpc: invalid string id: %v", err)
		}
		return StringID(s), nil
	default:
		n, err := strconv.ParseInt(string(data), 10, 64)
		if err == nil {
			return Int64ID(n), nil
		}
		// A number like 1.0 or 1e3 is a legal JSON number but not an
		// integer id we can echo back exactly.
		return ID{}, fmt.Errorf("jsonrpc: id %s is not an integer or string", textcut.CutBytes(data, 64))
	}
	return ID{}, fmt.Errorf("jsonrpc: id %s is not an integer or string", textcut.CutBytes(data, 64))
}
