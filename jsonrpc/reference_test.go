package jsonrpc

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/conduitmcp/conduit/internal/textcut"
	"strconv"
)

// This file keeps the encoding/json-based DecodeMessage that the hand-rolled
// decoder replaced. The differential test and FuzzDecodeMessage check that
// both accept and reject the same inputs, with the same error class, and
// decode the same messages.

// wireMessageReference is the union of all members a message may carry;
// absent members stay nil so presence can be told from a JSON null.
type wireMessageReference struct {
	JSONRPC *string         `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`
}

func isNullReference(b json.RawMessage) bool { return string(b) == "null" }

// decodeMessageReference is the former DecodeMessage, unchanged but for names.
func decodeMessageReference(data []byte) (Message, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, &DecodeError{Reason: "empty input", Err: errEmpty}
	}
	if data[0] != '{' {
		if !json.Valid(data) {
			return nil, &DecodeError{Reason: "not JSON", Err: errNotJSON}
		}
		if data[0] == '[' {
			return nil, &DecodeError{Reason: "batches are not supported"}
		}
		return nil, &DecodeError{Reason: "not a JSON object"}
	}
	var w wireMessageReference
	if err := json.Unmarshal(data, &w); err != nil {
		if !json.Valid(data) {
			return nil, &DecodeError{Reason: "not JSON", Err: err}
		}
		return nil, &DecodeError{Reason: "malformed member: " + err.Error()}
	}
	if w.JSONRPC == nil || *w.JSONRPC != Version {
		return nil, &DecodeError{Reason: `missing or wrong "jsonrpc" version`}
	}
	if w.Method != nil {
		var method string
		if isNullReference(w.Method) || json.Unmarshal(w.Method, &method) != nil {
			return nil, &DecodeError{Reason: "method is not a string"}
		}
		if w.Result != nil || w.Error != nil {
			return nil, &DecodeError{Reason: "request carries result or error"}
		}
		if method == "" {
			return nil, &DecodeError{Reason: "empty method"}
		}
		req := &Request{Method: method}
		if w.ID != nil {
			id, err := parseIDReference(w.ID)
			if err != nil {
				return nil, &DecodeError{Reason: err.Error()}
			}
			if !id.IsValid() {
				return nil, &DecodeError{Reason: "request id is null"}
			}
			req.ID = id
		}
		if w.Params != nil && !isNullReference(w.Params) {
			if c := w.Params[0]; c != '{' && c != '[' {
				return nil, &DecodeError{Reason: "params is neither object nor array"}
			}
			req.Params = w.Params
		}
		return req, nil
	}
	if w.ID == nil {
		return nil, &DecodeError{Reason: "message has neither method nor id"}
	}
	id, err := parseIDReference(w.ID)
	if err != nil {
		return nil, &DecodeError{Reason: err.Error()}
	}
	if (w.Result != nil) == (w.Error != nil) {
		return nil, &DecodeError{Reason: "response must carry exactly one of result and error"}
	}
	resp := &Response{ID: id}
	if w.Error != nil {
		var e Error
		var probe struct {
			Code    *json.Number `json:"code"`
			Message *string      `json:"message"`
		}
		if err := json.Unmarshal(w.Error, &probe); err != nil || probe.Code == nil {
			return nil, &DecodeError{Reason: "malformed error object"}
		}
		code, err := probe.Code.Int64()
		if err != nil {
			return nil, &DecodeError{Reason: "error code is not an integer"}
		}
		if err := json.Unmarshal(w.Error, &e); err != nil {
			return nil, &DecodeError{Reason: "malformed error object"}
		}
		e.Code = code
		if isNullReference(e.Data) {
			e.Data = nil
		}
		resp.Error = &e
		return resp, nil
	}
	if !id.IsValid() {
		return nil, &DecodeError{Reason: "success response id is null"}
	}
	resp.Result = w.Result
	return resp, nil
}

// parseIDReference is the former parseID, used by decodeMessageReference.
func parseIDReference(data []byte) (ID, error) {
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
		return ID{}, fmt.Errorf("jsonrpc: id %s is not an integer or string", textcut.CutBytes(data, 64))
	}
	return ID{}, fmt.Errorf("jsonrpc: id %s is not an integer or string", textcut.CutBytes(data, 64))
}
