package jsonrpc

import (
	"bytes"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// This file holds DecodeMessage: it walks the members of the top-level
// object once with the validating scanner of internal/jsonscan, remembers
// where the members it cares about are, and then builds the message with
// few allocations (decode_request.go, decode_response.go).
//
// The scanner accepts exactly what encoding/json accepts (json.Valid): the
// RFC 8259 grammar, invalid UTF-8 inside strings included, and nesting up to
// jsonscan.MaxDepth. Members are matched to names the way encoding/json matches struct
// fields: exactly, or else case-insensitively (Unicode simple folding) after
// unescaping; of duplicate members the last one counts. The tests check all
// of this against the former encoding/json-based decoder, kept as
// decodeMessageReference in reference_test.go.

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

// members is what DecodeMessage learned from the top-level object: where
// the last occurrence of each member is.
type members struct {
	jsonrpc, id, method, params, result, err jsonscan.Span
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
func (m *members) rawValue(data []byte, s jsonscan.Span) []byte {
	if m.own {
		return data[s.Start:s.End:s.End]
	}
	return clone(s.Raw(data))
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
		if err := jsonscan.Validate(data); err != nil {
			return nil, &DecodeError{Reason: "not JSON", Err: err}
		}
		if data[0] == '[' {
			return nil, &DecodeError{Reason: "batches are not supported"}
		}
		return nil, &DecodeError{Reason: "not a JSON object"}
	}
	m := members{own: own}
	r := jsonscan.ObjectReader{Data: data, Depth: 1}
	for {
		key, val, ok, err := r.Next()
		if err != nil {
			de := &DecodeError{Reason: "not JSON", Err: err}
			if jsonscan.IsDepthError(err) {
				de.ID = recoverID(data)
			}
			return nil, de
		}
		if !ok {
			break
		}
		switch jsonscan.MatchKey(data, key, topMembers[:]) {
		case memberJSONRPC:
			if val.Kind != jsonscan.KindString && val.Kind != jsonscan.KindNull {
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
	if r.I != len(data) { // data is trimmed: anything left is garbage
		return nil, &DecodeError{Reason: "not JSON", Err: jsonscan.ErrAt(data, r.I, "after top-level value")}
	}
	if m.badVersion || m.jsonrpc.Kind != jsonscan.KindString || !jsonscan.StringIs(data, m.jsonrpc, Version) {
		return nil, m.withID(data, &DecodeError{Reason: `missing or wrong "jsonrpc" version`})
	}
	if m.method.Kind != jsonscan.KindAbsent {
		return m.request(data)
	}
	msg, err := m.response(data)
	if err != nil {
		return nil, m.withID(data, err)
	}
	return msg, nil
}

// withID sets the ID of err, a *DecodeError, to the message's id when the
// message is shaped as a response (no method member) and its id is an
// integer or a string: the answer is broken, but it names the call it
// answers. A request's id is the server's, never one of ours: it is left
// out.
func (m *members) withID(data []byte, err error) error {
	de, ok := err.(*DecodeError)
	if !ok || m.method.Kind != jsonscan.KindAbsent {
		return err
	}
	de.ID = idOf(data, m.id)
	return de
}

// idOf returns the id at s, or the zero ID when s is not an integer or a
// string id.
func idOf(data []byte, s jsonscan.Span) ID {
	if s.Kind != jsonscan.KindString && s.Kind != jsonscan.KindNumber {
		return ID{}
	}
	id, str, err := parseIDSpan(data, s)
	if err != nil {
		return ID{}
	}
	if str.Kind == jsonscan.KindString {
		var b strings.Builder
		jsonscan.WriteString(&b, data, str)
		return StringID(b.String())
	}
	return id
}

// recoverID returns the top-level id of data, an object nested deeper than
// the scanner allows, without decoding it: the top-level members are
// walked with nested containers skipped by counting brackets, so the cost
// is linear and needs no stack. It returns the zero ID when the object
// has a method member (a request, whose id is the server's), its id is
// not an integer or a string, or its top level does not scan.
func recoverID(data []byte) ID {
	var id, method jsonscan.Span
	i := jsonscan.SkipSpace(data, 1)
	for i < len(data) && data[i] == '"' {
		key, next, err := jsonscan.ScanKey(data, i)
		if err != nil {
			return ID{}
		}
		val, err := jsonscan.SkipNested(data, jsonscan.SkipSpace(data, next))
		if err != nil {
			return ID{}
		}
		switch jsonscan.MatchKey(data, key, topMembers[:]) {
		case memberID:
			id = val
		case memberMethod:
			method = val
		}
		i = jsonscan.SkipSpace(data, val.End)
		if i < len(data) && data[i] == ',' {
			i = jsonscan.SkipSpace(data, i+1)
		}
	}
	if i != len(data)-1 || data[i] != '}' || method.Kind != jsonscan.KindAbsent {
		return ID{}
	}
	return idOf(data, id)
}

// clone returns a copy of b whose capacity is its length.
func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}
