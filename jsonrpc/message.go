package jsonrpc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// Version is the value of the "jsonrpc" member of every message.
const Version = "2.0"

// Message is a JSON-RPC 2.0 message: a [*Request] (a notification when it
// has no ID) or a [*Response]. The set is closed.
type Message interface {
	isMessage()
}

// Request is a request or, when ID is the zero [ID], a notification.
type Request struct {
	// ID identifies a request; the zero ID makes this a notification.
	ID ID
	// Method is the method name.
	Method string
	// Params is the raw JSON params value; nil when absent.
	Params json.RawMessage
}

// IsNotification reports whether r carries no id.
func (r *Request) IsNotification() bool { return !r.ID.IsValid() }

func (*Request) isMessage() {}

// Response answers a request. Exactly one of Result and Error is set.
type Response struct {
	// ID is the id of the request answered; the zero ID when the peer
	// could not read it (error responses only).
	ID ID
	// Result is the raw JSON result; nil when Error is set.
	Result json.RawMessage
	// Error is the error; nil on success.
	Error *Error
}

func (*Response) isMessage() {}

// Err returns r.Error as an error, or nil. It avoids the typed-nil trap of
// returning r.Error directly.
func (r *Response) Err() error {
	if r.Error == nil {
		return nil
	}
	return r.Error
}

// NewRequest returns a request with params encoded as JSON. A nil params
// leaves Params absent.
func NewRequest(id ID, method string, params any) (*Request, error) {
	raw, err := MarshalParams(params)
	if err != nil {
		return nil, err
	}
	return &Request{ID: id, Method: method, Params: raw}, nil
}

// NewNotification returns a notification with params encoded as JSON.
func NewNotification(method string, params any) (*Request, error) {
	return NewRequest(ID{}, method, params)
}

// NewResponse returns a success response with result encoded as JSON. A nil
// result encodes as {} (MCP results are objects).
func NewResponse(id ID, result any) (*Response, error) {
	if result == nil {
		return &Response{ID: id, Result: json.RawMessage("{}")}, nil
	}
	if raw, ok := result.(json.RawMessage); ok {
		return &Response{ID: id, Result: raw}, nil
	}
	b, err := json.Marshal(result)
	if err != nil {
		return nil, err
	}
	return &Response{ID: id, Result: b}, nil
}

// NewErrorResponse returns an error response.
func NewErrorResponse(id ID, err *Error) *Response {
	return &Response{ID: id, Error: err}
}

// MarshalParams encodes params for a request's Params: nil stays absent,
// json.RawMessage and []byte pass through untouched (the caller vouches
// that they are valid JSON), anything else goes through json.Marshal.
func MarshalParams(params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case nil:
		return nil, nil
	case json.RawMessage:
		return p, nil
	case []byte:
		return json.RawMessage(p), nil
	}
	return json.Marshal(params)
}

// EncodeMessage returns the compact JSON encoding of m, without a trailing
// newline. Params and results must already be valid JSON; they are copied
// as they are, without re-encoding.
func EncodeMessage(m Message) ([]byte, error) {
	return AppendMessage(make([]byte, 0, sizeHint(m)), m)
}

// sizeHint estimates the encoded size of m so EncodeMessage allocates once
// in the common case.
func sizeHint(m Message) int {
	n := 96
	switch m := m.(type) {
	case *Request:
		if m != nil {
			n += len(m.Method) + len(m.Params)
		}
	case *Response:
		if m != nil {
			n += len(m.Result)
			if m.Error != nil {
				n += len(m.Error.Message) + len(m.Error.Data)
			}
		}
	}
	return n
}

// AppendMessage appends the compact JSON encoding of m to b.
func AppendMessage(b []byte, m Message) ([]byte, error) {
	switch m := m.(type) {
	case *Request:
		if m == nil {
			return b, &DecodeError{Reason: "nil message"}
		}
		b = append(b, `{"jsonrpc":"2.0",`...)
		if m.ID.IsValid() {
			b = append(b, `"id":`...)
			b = m.ID.AppendJSON(b)
			b = append(b, ',')
		}
		b = append(b, `"method":`...)
		b = appendString(b, m.Method)
		if len(m.Params) > 0 {
			b = append(b, `,"params":`...)
			b = appendCompact(b, m.Params)
		}
		return append(b, '}'), nil
	case *Response:
		if m == nil {
			return b, &DecodeError{Reason: "nil message"}
		}
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = m.ID.AppendJSON(b)
		if m.Error != nil {
			b = append(b, `,"error":{"code":`...)
			b = appendInt(b, m.Error.Code)
			b = append(b, `,"message":`...)
			b = appendString(b, m.Error.Message)
			if len(m.Error.Data) > 0 {
				b = append(b, `,"data":`...)
				b = appendCompact(b, m.Error.Data)
			}
			return append(b, "}}"...), nil
		}
		b = append(b, `,"result":`...)
		if len(m.Result) == 0 {
			b = append(b, "{}"...)
		} else {
			b = appendCompact(b, m.Result)
		}
		return append(b, '}'), nil
	case nil:
		return b, &DecodeError{Reason: "nil message"}
	}
	return b, &DecodeError{Reason: "unknown message type"}
}

// appendCompact appends raw JSON, removing insignificant white space only
// when there is any (newlines must not reach a line-delimited stream).
// Invalid JSON, which json.Compact refuses, is appended as it is.
func appendCompact(b []byte, raw []byte) []byte {
	if !jsonscan.HasSpaceOrControl(raw) {
		return append(b, raw...)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return append(b, raw...)
	}
	return append(b, buf.Bytes()...)
}

func appendInt(b []byte, n int64) []byte {
	var tmp [20]byte
	i := len(tmp)
	neg := n < 0
	u := uint64(n)
	if neg {
		u = uint64(-n)
	}
	for u >= 10 {
		i--
		tmp[i] = byte('0' + u%10)
		u /= 10
	}
	i--
	tmp[i] = byte('0' + u)
	if neg {
		i--
		tmp[i] = '-'
	}
	return append(b, tmp[i:]...)
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, byte for byte as encoding/json
// encodes it: the short escapes \" \\ \n \r \t \b \f, other control
// characters and the HTML-sensitive < > & as \u00XX, U+2028 and U+2029
// escaped, and each byte of invalid UTF-8 replaced by \ufffd.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
