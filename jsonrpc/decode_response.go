package jsonrpc

import (
	"github.com/conduitmcp/conduit/internal/textcut"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// responseWithError lets an error response and its error share one allocation.
type responseWithError struct {
	resp Response
	err  Error
}

// response builds a response: at most three allocations (the Response with
// its Error, the result or error data copy, and one string for a string id
// and the error message).
func (m *members) response(data []byte) (Message, error) {
	if m.id.Kind == jsonscan.KindAbsent {
		return nil, &DecodeError{Reason: "message has neither method nor id"}
	}
	var id ID
	var idStr jsonscan.Span
	if m.id.Kind != jsonscan.KindNull {
		var err error
		if id, idStr, err = parseIDSpan(data, m.id); err != nil {
			return nil, err
		}
	}
	if (m.result.Kind != jsonscan.KindAbsent) == (m.err.Kind != jsonscan.KindAbsent) {
		return nil, &DecodeError{Reason: "response must carry exactly one of result and error"}
	}
	if m.err.Kind != jsonscan.KindAbsent {
		return m.errorResponse(data, id, idStr)
	}
	if !id.IsValid() {
		return nil, &DecodeError{Reason: "success response id is null"}
	}
	resp := &Response{ID: id, Result: m.rawValue(data, m.result)}
	if idStr.Kind != jsonscan.KindAbsent {
		var b strings.Builder
		b.Grow(jsonscan.UnquotedLen(data, idStr))
		jsonscan.WriteString(&b, data, idStr)
		resp.ID = StringID(b.String())
	}
	return resp, nil
}

// errorResponse decodes the error object the way encoding/json decoded it
// into Error: every "code" must be null or an integer, the last one not
// null; every "message" a string or null (null leaves it as it was); the
// last "data" counts, null meaning none.
func (m *members) errorResponse(data []byte, id ID, idStr jsonscan.Span) (Message, error) {
	if m.err.Kind != jsonscan.KindObject {
		return nil, errMalformedError()
	}
	var code int64
	var codeSet, bad bool
	var msg, errData jsonscan.Span
	r := jsonscan.ObjectReader{Data: data, I: m.err.Start, Depth: 2}
	for {
		key, val, ok, err := r.Next()
		if err != nil {
			return nil, errMalformedError() // unreachable: the input was validated
		}
		if !ok {
			break
		}
		switch jsonscan.MatchKey(data, key, errorMembers[:]) {
		case memberCode:
			switch val.Kind {
			case jsonscan.KindNull:
				codeSet = false
			case jsonscan.KindNumber:
				n, ok := jsonscan.ParseInt(data, val)
				bad = bad || !ok
				code, codeSet = n, true
			default:
				bad = true
			}
		case memberMessage:
			switch val.Kind {
			case jsonscan.KindString:
				msg = val
			case jsonscan.KindNull:
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
	if errData.Kind != jsonscan.KindAbsent && errData.Kind != jsonscan.KindNull {
		p.err.Data = m.rawValue(data, errData)
	}
	if msg.Kind != jsonscan.KindAbsent || idStr.Kind != jsonscan.KindAbsent {
		var b strings.Builder
		b.Grow(jsonscan.UnquotedLen(data, msg) + jsonscan.UnquotedLen(data, idStr))
		if msg.Kind != jsonscan.KindAbsent {
			jsonscan.WriteString(&b, data, msg)
		}
		k := b.Len()
		if idStr.Kind != jsonscan.KindAbsent {
			jsonscan.WriteString(&b, data, idStr)
		}
		s := b.String()
		p.err.Message = s[:k]
		if idStr.Kind != jsonscan.KindAbsent {
			p.resp.ID = StringID(s[k:])
		}
	}
	return &p.resp, nil
}

func errMalformedError() error { return &DecodeError{Reason: "malformed error object"} }

// parseIDSpan reads a non-null id. An integer id is returned whole; for a
// string id it returns the jsonscan.Span, for the caller to turn into a string
// together with its others.
func parseIDSpan(data []byte, s jsonscan.Span) (ID, jsonscan.Span, error) {
	switch s.Kind {
	case jsonscan.KindString:
		return ID{kind: idString}, s, nil
	case jsonscan.KindNumber:
		if n, ok := jsonscan.ParseInt(data, s); ok {
			return Int64ID(n), jsonscan.Span{}, nil
		}
	}
	return ID{}, jsonscan.Span{}, &DecodeError{Reason: "jsonrpc: id " + textcut.CutBytes(s.Raw(data), 64) + " is not an integer or string"}
}
