package negotiation

import (
	"bytes"
	"encoding/json"
	"mime"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// decodeBody reads the JSON-RPC response in an HTTP body: an event stream
// for text/event-stream (the first event whose data is a JSON-RPC response
// counts), JSON for everything else (application/json, but also a missing
// or mislabeled content type, so that a modern error is never missed). It
// returns nil when the body holds none (empty, not JSON, not JSON-RPC, or a
// request).
func decodeBody(contentType string, body []byte) *jsonrpc.Response {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if mediaType(contentType) == "text/event-stream" {
		var found *jsonrpc.Response
		eachEvent(body, func(data []byte) bool {
			found = decodeResponse(data)
			return found == nil
		})
		return found
	}
	return decodeResponse(body)
}

// mediaType returns the lower-case media type of a Content-Type value,
// tolerating malformed parameters.
func mediaType(contentType string) string {
	if t, _, err := mime.ParseMediaType(contentType); err == nil {
		return t
	}
	t, _, _ := strings.Cut(contentType, ";")
	return strings.ToLower(strings.TrimSpace(t))
}

// decodeResponse decodes data as one JSON-RPC response. When strict
// decoding fails it still reads an object whose "error" member is an error
// object with an integer code, so that a modern error in a slightly
// malformed envelope (no id, no "jsonrpc") is never taken for legacy
// evidence.
func decodeResponse(data []byte) *jsonrpc.Response {
	m, err := jsonrpc.DecodeMessage(data)
	if err == nil {
		if r, ok := m.(*jsonrpc.Response); ok {
			return r
		}
		return nil
	}
	var loose struct {
		Method *string          `json:"method"`
		Error  *json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &loose) != nil || loose.Method != nil || loose.Error == nil {
		return nil
	}
	var e struct {
		Code    json.Number     `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if json.Unmarshal(*loose.Error, &e) != nil {
		return nil
	}
	code, err := e.Code.Int64()
	if err != nil {
		return nil
	}
	if isJSONNull(e.Data) {
		e.Data = nil
	}
	return &jsonrpc.Response{Error: &jsonrpc.Error{Code: code, Message: e.Message, Data: e.Data}}
}

// eachEvent parses body as a text/event-stream and calls yield with the
// data of each event (its data lines joined by "\n") until yield returns
// false. Lines end in LF, CRLF or CR; comment lines (":") and fields other
// than data are ignored. A final event without its blank line is still
// delivered, since the body is complete.
func eachEvent(body []byte, yield func(data []byte) bool) {
	var data []byte
	has := false
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		var line []byte
		if i < 0 {
			line, body = body, nil
		} else {
			line = body[:i]
			if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			body = body[i+1:]
		}
		if len(line) == 0 {
			if has && !yield(data) {
				return
			}
			data, has = data[:0], false
			continue
		}
		if line[0] == ':' {
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
	if has {
		yield(data)
	}
}
