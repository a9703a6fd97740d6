package jsonrpc_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// TestErrorIsByCodeAcrossWire: an error decoded from the wire matches the
// sentinel with its code, and only that one.
func TestErrorIsByCodeAcrossWire(t *testing.T) {
	sentinels := []*jsonrpc.Error{
		jsonrpc.ErrParse, jsonrpc.ErrInvalidRequest, jsonrpc.ErrMethodNotFound, jsonrpc.ErrInvalidParams,
		jsonrpc.ErrInternal, jsonrpc.ErrRequestCancelled, jsonrpc.ErrTaskNotReady, jsonrpc.ErrResourceNotFound,
		jsonrpc.ErrURLElicitationRequired, jsonrpc.ErrHeaderMismatch, jsonrpc.ErrMissingRequiredClientCapability,
		jsonrpc.ErrUnsupportedProtocolVersion,
	}
	for _, s := range sentinels {
		wire := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"a different message","data":{"x":1}}}`, s.Code)
		m, err := jsonrpc.DecodeMessage([]byte(wire))
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*jsonrpc.Response).Err()
		wrapped := fmt.Errorf("calling tool: %w", got)
		for _, other := range sentinels {
			if want := other.Code == s.Code; errors.Is(wrapped, other) != want {
				t.Errorf("errors.Is(wire %d, %v) = %v, want %v", s.Code, other.Code, !want, want)
			}
		}
		if code, ok := jsonrpc.Code(wrapped); !ok || code != s.Code {
			t.Errorf("Code(wire %d) = %d, %v", s.Code, code, ok)
		}
	}
	if code, ok := jsonrpc.Code(errors.New("plain")); ok || code != 0 {
		t.Errorf("Code(plain) = %d, %v; want 0, false", code, ok)
	}
	if code, ok := jsonrpc.Code(nil); ok || code != 0 {
		t.Errorf("Code(nil) = %d, %v; want 0, false", code, ok)
	}
	var nilErr *jsonrpc.Error
	if nilErr.Is(jsonrpc.ErrParse) || jsonrpc.ErrParse.Is(nilErr) || jsonrpc.ErrParse.Is(errors.New("x")) {
		t.Errorf("Is with nil or foreign errors matched")
	}
	if got := nilErr.Error(); got != "jsonrpc: <nil error>" {
		t.Errorf("nil Error() = %q", got)
	}
}

// TestIsResourceNotFound: the legacy -32002 and the modern -32602 are a
// missing resource, wrapped or not, from the wire or built; nothing else
// is.
func TestIsResourceNotFound(t *testing.T) {
	for code, want := range map[int64]bool{-32002: true, -32602: true, -32601: false, -32603: false, -32000: false} {
		wire := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"error":{"code":%d,"message":"no such resource"}}`, code)
		m, err := jsonrpc.DecodeMessage([]byte(wire))
		if err != nil {
			t.Fatal(err)
		}
		got := m.(*jsonrpc.Response).Err()
		for _, e := range []error{got, fmt.Errorf("client: resources/read: %w", got), jsonrpc.NewError(code, "built")} {
			if jsonrpc.IsResourceNotFound(e) != want {
				t.Errorf("IsResourceNotFound(%v) = %v, want %v", e, !want, want)
			}
		}
	}
	for _, e := range []error{nil, errors.New("resource not found"), (*jsonrpc.Error)(nil)} {
		if jsonrpc.IsResourceNotFound(e) {
			t.Errorf("IsResourceNotFound(%v) = true, want false", e)
		}
	}
}

func TestErrorCodes(t *testing.T) {
	tests := []struct {
		got, want int64
	}{
		{jsonrpc.CodeParseError, -32700}, {jsonrpc.CodeInvalidRequest, -32600}, {jsonrpc.CodeMethodNotFound, -32601},
		{jsonrpc.CodeInvalidParams, -32602}, {jsonrpc.CodeInternalError, -32603},
		{jsonrpc.CodeHeaderMismatch, -32020}, {jsonrpc.CodeMissingRequiredClientCapability, -32021},
		{jsonrpc.CodeUnsupportedProtocolVersion, -32022}, {jsonrpc.CodeResourceNotFound, -32002},
		{jsonrpc.CodeURLElicitationRequired, -32042},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("code = %d, want %d", tc.got, tc.want)
		}
	}
	for code, want := range map[int64]bool{-32099: true, -32000: true, -32050: true, -32100: false, -31999: false, -32601: false} {
		if got := jsonrpc.IsServerErrorCode(code); got != want {
			t.Errorf("IsServerErrorCode(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestErrorBuilders(t *testing.T) {
	e := jsonrpc.ErrInvalidParams.WithMessage("unknown tool").WithData(map[string]any{"name": "x"})
	if e.Code != jsonrpc.CodeInvalidParams || e.Message != "unknown tool" || string(e.Data) != `{"name":"x"}` {
		t.Errorf("built error = %+v", e)
	}
	if jsonrpc.ErrInvalidParams.Message != "invalid params" || jsonrpc.ErrInvalidParams.Data != nil {
		t.Errorf("builders mutated the sentinel: %+v", jsonrpc.ErrInvalidParams)
	}
	if bad := jsonrpc.ErrInternal.WithData(make(chan int)); bad.Data != nil {
		t.Errorf("WithData(unmarshalable).Data = %s, want nil", bad.Data)
	}
	if !errors.Is(e, jsonrpc.ErrInvalidParams) {
		t.Errorf("built error does not match its sentinel")
	}
	if got := e.Error(); got != `jsonrpc: unknown tool (code -32602, data {"name":"x"})` {
		t.Errorf("Error() = %q", got)
	}
	big := jsonrpc.NewError(1, "m").WithData(strings.Repeat("x", 300))
	if got := big.Error(); got != "jsonrpc: m (code 1)" {
		t.Errorf("Error() with large data = %q", got)
	}
	// An encoded error round-trips through encoding/json too.
	b, _ := json.Marshal(e)
	var back jsonrpc.Error
	if err := json.Unmarshal(b, &back); err != nil || back.Code != e.Code || string(back.Data) != string(e.Data) {
		t.Errorf("json round trip = %+v, %v", back, err)
	}
}

func TestDecodeErrorMessages(t *testing.T) {
	_, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","method":"m"`))
	var de *jsonrpc.DecodeError
	if !errors.As(err, &de) || de.Unwrap() == nil || !strings.Contains(err.Error(), ": ") {
		t.Errorf("parse DecodeError = %v (unwrap %v)", err, de)
	}
	_, err = jsonrpc.DecodeMessage([]byte(`{}`))
	if !errors.As(err, &de) || de.Unwrap() != nil {
		t.Errorf("invalid-request DecodeError = %v", err)
	}
	if errors.Is(err, errors.New("x")) {
		t.Errorf("DecodeError matched a foreign error")
	}
}
