package protocol

import (
	"encoding/json"
	"fmt"
)

// InputRequiredResult is a 2026-07-28 multi round-trip (MRTR) result
// (resultType "input_required") of tools/call, prompts/get or
// resources/read. The client fulfils InputRequests and retries the
// original request, with a new id, carrying the answers in inputResponses
// and RequestState echoed exactly.
//
// At least one of InputRequests and RequestState is present; a
// RequestState-only result asks for a plain retry.
type InputRequiredResult struct {
	ResultType    string                  `json:"resultType"`
	InputRequests map[string]InputRequest `json:"inputRequests,omitempty"`
	// RequestState is opaque: nil when the server sent none (then the
	// retry must carry none), otherwise echoed byte for byte, even "".
	RequestState *string `json:"requestState,omitempty"`
	Meta         Meta    `json:"_meta,omitempty"`
}

// InputRequest is one server request embedded in an
// [InputRequiredResult] (or, in the 2026 tasks extension, in an
// input_required task): a bare {method, params} without jsonrpc or id.
// Method is elicitation/create, sampling/createMessage or roots/list;
// Params stays raw and is read with [InputRequest.ElicitParams],
// [InputRequest.CreateMessageParams] or [InputRequest.ListRootsParams].
//
// Members other than method and params are kept in Extra and written
// back, so a request survives a decode/encode round trip unchanged.
type InputRequest struct {
	Method string
	// Params is nil when absent (roots/list may omit it).
	Params json.RawMessage
	// Extra holds unknown members, raw.
	Extra map[string]json.RawMessage
}

// MarshalJSON encodes r as {method, params?, …Extra}.
func (r InputRequest) MarshalJSON() ([]byte, error) {
	m := make(map[string]json.RawMessage, len(r.Extra)+2)
	for k, v := range r.Extra {
		m[k] = v
	}
	method, err := json.Marshal(r.Method)
	if err != nil {
		return nil, err
	}
	m["method"] = method
	if len(r.Params) > 0 {
		m["params"] = r.Params
	} else {
		delete(m, "params")
	}
	return json.Marshal(m)
}

// UnmarshalJSON decodes an embedded request. method must be a string.
func (r *InputRequest) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("protocol: decoding input request: %v", err)
	}
	var out InputRequest
	if raw, ok := m["method"]; ok {
		if err := json.Unmarshal(raw, &out.Method); err != nil {
			return fmt.Errorf("protocol: input request method is not a string")
		}
		delete(m, "method")
	}
	if raw, ok := m["params"]; ok {
		if string(raw) != "null" {
			out.Params = raw
		}
		delete(m, "params")
	}
	if len(m) > 0 {
		out.Extra = m
	}
	*r = out
	return nil
}

// NewInputRequest returns an input request for method with params encoded
// as JSON; nil params leaves them out.
func NewInputRequest(method string, params any) (InputRequest, error) {
	r := InputRequest{Method: method}
	if params == nil {
		return r, nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		return InputRequest{}, fmt.Errorf("protocol: encoding %s params: %w", method, err)
	}
	r.Params = b
	return r, nil
}

// ElicitParams decodes Params of an elicitation/create request. It fails
// when Method is another method or Params does not decode.
func (r InputRequest) ElicitParams() (*ElicitParams, error) {
	var p ElicitParams
	if err := r.decode(MethodElicitationCreate, &p, true); err != nil {
		return nil, err
	}
	return &p, nil
}

// CreateMessageParams decodes Params of a sampling/createMessage request.
func (r InputRequest) CreateMessageParams() (*CreateMessageParams, error) {
	var p CreateMessageParams
	if err := r.decode(MethodSamplingCreateMessage, &p, true); err != nil {
		return nil, err
	}
	return &p, nil
}

// ListRootsParams decodes Params of a roots/list request; absent params
// decode to the zero value.
func (r InputRequest) ListRootsParams() (*ListRootsParams, error) {
	var p ListRootsParams
	if err := r.decode(MethodRootsList, &p, false); err != nil {
		return nil, err
	}
	return &p, nil
}

func (r InputRequest) decode(method string, v any, required bool) error {
	if r.Method != method {
		return fmt.Errorf("protocol: input request is %q, not %q", r.Method, method)
	}
	if len(r.Params) == 0 {
		if required {
			return fmt.Errorf("protocol: %s input request has no params", method)
		}
		return nil
	}
	if err := json.Unmarshal(r.Params, v); err != nil {
		return fmt.Errorf("protocol: decoding %s params: %v", method, err)
	}
	return nil
}

// InputResponses answers the inputRequests of an [InputRequiredResult]
// (2026-07-28), or of an input_required task via tasks/update (tasks
// extension). Keys are the server's inputRequests keys; each value is the
// plain result for that request: an [ElicitResult], a
// [CreateMessageResult] or a [ListRootsResult], without resultType. Values
// stay raw; use [InputResponses.Set] to add one.
type InputResponses map[string]json.RawMessage

// Set stores v, encoded as JSON, as the answer to key. A nil map is
// created.
func (r *InputResponses) Set(key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("protocol: encoding input response %q: %w", key, err)
	}
	if *r == nil {
		*r = make(InputResponses)
	}
	(*r)[key] = b
	return nil
}

// InputRequests maps the server's keys to embedded requests, as in
// [InputRequiredResult.InputRequests] and [DetailedTask.InputRequests].
type InputRequests = map[string]InputRequest

// MarshalJSON encodes r; an empty ResultType is written as
// "input_required".
func (r InputRequiredResult) MarshalJSON() ([]byte, error) {
	type plain InputRequiredResult
	if r.ResultType == "" {
		r.ResultType = ResultTypeInputRequired
	}
	return json.Marshal(plain(r))
}
