package jsonrpc

import (
	"encoding/json"
	"errors"
	"math"
)

var (
	errEmpty   = errors.New("empty input")
	errNotJSON = errors.New("invalid JSON")
)

// The validators below work on a generic decoded JSON object, as produced by
// encoding/json into map[string]any. They check shape only, like the
// seed's valid_request?/valid_notification?/valid_response?.

// ValidRequest reports whether msg is a JSON-RPC 2.0 request: "jsonrpc" is
// "2.0", "method" is a non-empty string, "id" is a string or an integer,
// "params", when present, is an object or an array, and there is no
// "result" or "error".
func ValidRequest(msg map[string]any) bool {
	if !validEnvelope(msg) || !validMethod(msg) {
		return false
	}
	id, ok := msg["id"]
	return ok && validIDValue(id) && validParams(msg)
}

// ValidNotification reports whether msg is a JSON-RPC 2.0 notification: a
// request shape without an "id" member.
func ValidNotification(msg map[string]any) bool {
	if !validEnvelope(msg) || !validMethod(msg) {
		return false
	}
	_, hasID := msg["id"]
	return !hasID && validParams(msg)
}

// ValidResponse reports whether msg is a JSON-RPC 2.0 response: an "id"
// member (null allowed only on error responses), no "method", and exactly
// one of "result" and "error", the error being an object with an integer
// code and a string message.
func ValidResponse(msg map[string]any) bool {
	if !validEnvelope(msg) {
		return false
	}
	if _, ok := msg["method"]; ok {
		return false
	}
	id, ok := msg["id"]
	if !ok {
		return false
	}
	_, hasResult := msg["result"]
	errVal, hasError := msg["error"]
	if hasResult == hasError {
		return false
	}
	if hasResult {
		return validIDValue(id)
	}
	if id != nil && !validIDValue(id) {
		return false
	}
	obj, ok := errVal.(map[string]any)
	if !ok {
		return false
	}
	if _, ok := obj["message"].(string); !ok {
		return false
	}
	return isIntegral(obj["code"])
}

func validEnvelope(msg map[string]any) bool {
	v, ok := msg["jsonrpc"].(string)
	return ok && v == Version
}

// validMethod checks the method of a request or notification, which must
// not also carry a response's result or error (DecodeMessage rejects those
// too).
func validMethod(msg map[string]any) bool {
	m, ok := msg["method"].(string)
	if !ok || m == "" {
		return false
	}
	_, hasResult := msg["result"]
	_, hasError := msg["error"]
	return !hasResult && !hasError
}

func validParams(msg map[string]any) bool {
	p, ok := msg["params"]
	if !ok {
		return true
	}
	switch p.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func validIDValue(v any) bool {
	switch v.(type) {
	case string:
		return true
	}
	return isIntegral(v)
}

func isIntegral(v any) bool {
	switch n := v.(type) {
	case float64:
		return n == math.Trunc(n) && !math.IsInf(n, 0)
	case json.Number:
		_, err := n.Int64()
		return err == nil
	case int, int64, int32:
		return true
	}
	return false
}
