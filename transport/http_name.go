package transport

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/internal/jsonscan"
	"github.com/conduitmcp/conduit/protocol"
)

// nameHeader returns the Mcp-Name value of a modern request, if the method
// has one.
func nameHeader(method string, params json.RawMessage) (string, bool) {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead,
		protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
	default:
		return "", false
	}
	// Scan the top-level members rather than decode params, with the
	// outcome of decoding them into struct{ Name, URI, TaskID *string }:
	// keys match case-insensitively, the last one wins, null unsets, and
	// any other non-string value of one of the three fails.
	params = bytes.TrimSpace(params)
	if len(params) == 0 || params[0] != '{' || !json.Valid(params) {
		return "", false
	}
	var name, uri, taskID []byte // raw string values; nil when absent
	bad := false
	jsonscan.EachMember(params, func(key, val []byte) bool {
		var dst *[]byte
		switch {
		case jsonscan.KeyIs(key, "name"):
			dst = &name
		case jsonscan.KeyIs(key, "uri"):
			dst = &uri
		case jsonscan.KeyIs(key, "taskId"):
			dst = &taskID
		default:
			return true
		}
		switch val[0] {
		case '"':
			*dst = val
		case 'n':
			*dst = nil
		default:
			bad = true
			return false
		}
		return true
	})
	if bad {
		return "", false
	}
	var raw []byte
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		raw = name
	case protocol.MethodResourcesRead:
		raw = uri
	default:
		raw = taskID
	}
	if raw == nil {
		return "", false
	}
	if c := raw[1 : len(raw)-1]; bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return encodeStringHeader(string(c)), true
	}
	var v string
	if json.Unmarshal(raw, &v) != nil {
		return "", false
	}
	return encodeStringHeader(v), true
}
