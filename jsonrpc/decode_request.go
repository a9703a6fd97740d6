package jsonrpc

import (
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// request builds a request: at most three allocations (the Request, the
// params copy, and one string for an uncommon method name and a string id).
func (m *members) request(data []byte) (Message, error) {
	if m.method.Kind != jsonscan.KindString {
		return nil, &DecodeError{Reason: "method is not a string"}
	}
	if m.result.Kind != jsonscan.KindAbsent || m.err.Kind != jsonscan.KindAbsent {
		return nil, &DecodeError{Reason: "request carries result or error"}
	}
	if m.method.End-m.method.Start == 2 { // escapes never yield ""
		return nil, &DecodeError{Reason: "empty method"}
	}
	req := new(Request)
	var idStr jsonscan.Span
	if m.id.Kind != jsonscan.KindAbsent {
		if m.id.Kind == jsonscan.KindNull {
			return nil, &DecodeError{Reason: "request id is null"}
		}
		id, s, err := parseIDSpan(data, m.id)
		if err != nil {
			return nil, err
		}
		req.ID, idStr = id, s
	}
	if m.params.Kind != jsonscan.KindAbsent && m.params.Kind != jsonscan.KindNull {
		if m.params.Kind != jsonscan.KindObject && m.params.Kind != jsonscan.KindArray {
			return nil, &DecodeError{Reason: "params is neither object nor array"}
		}
		req.Params = m.rawValue(data, m.params)
	}
	method, known := "", false
	if jsonscan.PlainString(data, m.method) {
		method, known = commonMethods[string(m.method.Content(data))]
	}
	if !known || idStr.Kind != jsonscan.KindAbsent {
		// One allocation holds both strings.
		var b strings.Builder
		n := jsonscan.UnquotedLen(data, idStr)
		if !known {
			n += jsonscan.UnquotedLen(data, m.method)
		}
		b.Grow(n)
		if !known {
			jsonscan.WriteString(&b, data, m.method)
		}
		k := b.Len()
		if idStr.Kind != jsonscan.KindAbsent {
			jsonscan.WriteString(&b, data, idStr)
		}
		s := b.String()
		if !known {
			method = s[:k]
		}
		if idStr.Kind != jsonscan.KindAbsent {
			req.ID = StringID(s[k:])
		}
	}
	req.Method = method
	return req, nil
}
