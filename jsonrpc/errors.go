package jsonrpc

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Error is a JSON-RPC error object, as carried in an error response.
//
// Is matches any *Error with the same Code, so the exported sentinels
// ([ErrMethodNotFound], [ErrUnsupportedProtocolVersion], …) can be used with
// [errors.Is] on errors that came over the wire.
type Error struct {
	// Code is the JSON-RPC error code.
	Code int64 `json:"code"`
	// Message is a short human-readable description.
	Message string `json:"message"`
	// Data is the optional structured detail, kept raw; nil when absent.
	Data json.RawMessage `json:"data,omitempty"`
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e == nil {
		return "jsonrpc: <nil error>"
	}
	if len(e.Data) > 0 && len(e.Data) <= 256 {
		return fmt.Sprintf("jsonrpc: %s (code %d, data %s)", e.Message, e.Code, e.Data)
	}
	return fmt.Sprintf("jsonrpc: %s (code %d)", e.Message, e.Code)
}

// Is reports whether target is an *Error with the same code.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code
}

// WithData returns a copy of e whose Data is the JSON encoding of data.
// It is meant for building errors from the sentinels:
//
//	jsonrpc.ErrInvalidParams.WithMessage("unknown tool").WithData(map[string]any{"name": n})
func (e *Error) WithData(data any) *Error {
	c := *e
	b, err := json.Marshal(data)
	if err != nil {
		c.Data = nil
	} else {
		c.Data = b
	}
	return &c
}

// WithMessage returns a copy of e with Message replaced.
func (e *Error) WithMessage(msg string) *Error {
	c := *e
	c.Message = msg
	return &c
}

// NewError returns an error with the given code and message.
func NewError(code int64, message string) *Error { return &Error{Code: code, Message: message} }

// Code returns the JSON-RPC code of the first [*Error] in err's chain, and
// whether there was one. It is the CloseStatus-style helper for callers that
// switch on codes.
func Code(err error) (int64, bool) {
	var e *Error
	if errors.As(err, &e) && e != nil {
		return e.Code, true
	}
	return 0, false
}

// IsResourceNotFound reports whether err is (or wraps) a server's
// resource-not-found error: [CodeResourceNotFound] (-32002) from servers
// of 2025-11-25 and earlier, [CodeInvalidParams] (-32602) from modern
// (2026-07-28) ones, which report a missing resource as invalid params.
func IsResourceNotFound(err error) bool {
	return errors.Is(err, ErrResourceNotFound) || errors.Is(err, ErrInvalidParams)
}

// The error codes, each named once. The JSON-RPC 2.0 codes come first, then
// the MCP codes of the legacy era, then the codes the modern era
// (2026-07-28) allocated from -32020 upward.
const (
	CodeParseError     int64 = -32700
	CodeInvalidRequest int64 = -32600
	CodeMethodNotFound int64 = -32601
	CodeInvalidParams  int64 = -32602
	CodeInternalError  int64 = -32603

	// CodeServerErrorFirst and CodeServerErrorLast bound the range the
	// JSON-RPC specification reserves for implementation-defined server
	// errors. In the modern era only -32000..-32019 stay
	// implementation-defined; the rest is reserved for the MCP spec.
	CodeServerErrorFirst int64 = -32099
	CodeServerErrorLast  int64 = -32000

	// CodeRequestCancelled is what SDKs use for a request ended by
	// notifications/cancelled (implementation-defined range).
	CodeRequestCancelled int64 = -32800
	// CodeTaskNotReady is the legacy-era tasks code for a result that is
	// not available yet (implementation-defined range).
	CodeTaskNotReady int64 = -32801
	// CodeResourceNotFound is the legacy (2025-11-25 and earlier)
	// resource-not-found code; modern servers use -32602 instead.
	CodeResourceNotFound int64 = -32002
	// CodeURLElicitationRequired is the 2025-11-25 URL elicitation
	// required error; data holds {elicitations: [...]}.
	CodeURLElicitationRequired int64 = -32042

	// CodeHeaderMismatch (-32020): an HTTP header does not match the body.
	CodeHeaderMismatch int64 = -32020
	// CodeMissingRequiredClientCapability (-32021): data is
	// {requiredCapabilities: ClientCapabilities}.
	CodeMissingRequiredClientCapability int64 = -32021
	// CodeUnsupportedProtocolVersion (-32022): data is
	// {supported: [versions], requested: version}.
	CodeUnsupportedProtocolVersion int64 = -32022
)

// Sentinels for use with [errors.Is]. Do not modify them; use
// [Error.WithMessage] and [Error.WithData] to build errors from them.
var (
	ErrParse                           = NewError(CodeParseError, "parse error")
	ErrInvalidRequest                  = NewError(CodeInvalidRequest, "invalid request")
	ErrMethodNotFound                  = NewError(CodeMethodNotFound, "method not found")
	ErrInvalidParams                   = NewError(CodeInvalidParams, "invalid params")
	ErrInternal                        = NewError(CodeInternalError, "internal error")
	ErrRequestCancelled                = NewError(CodeRequestCancelled, "request cancelled")
	ErrTaskNotReady                    = NewError(CodeTaskNotReady, "task not ready")
	ErrResourceNotFound                = NewError(CodeResourceNotFound, "resource not found")
	ErrURLElicitationRequired          = NewError(CodeURLElicitationRequired, "URL elicitation required")
	ErrHeaderMismatch                  = NewError(CodeHeaderMismatch, "header mismatch")
	ErrMissingRequiredClientCapability = NewError(CodeMissingRequiredClientCapability, "missing required client capability")
	ErrUnsupportedProtocolVersion      = NewError(CodeUnsupportedProtocolVersion, "unsupported protocol version")
)

// IsServerErrorCode reports whether code lies in the JSON-RPC
// implementation-defined server error range -32099..-32000.
func IsServerErrorCode(code int64) bool {
	return code >= CodeServerErrorFirst && code <= CodeServerErrorLast
}

// DecodeError reports input that is not a valid JSON-RPC 2.0 message.
type DecodeError struct {
	// Reason says what is wrong, e.g. "missing jsonrpc version".
	Reason string
	// Err is the underlying JSON error, if any.
	Err error
	// ID is the message's id when one could be recovered from input that
	// is a JSON object but not a valid message (the zero ID otherwise), so
	// that a client can fail the call that the broken answer was meant for.
	ID ID
}

func (e *DecodeError) Error() string {
	if e.Err != nil {
		return "jsonrpc: decoding message: " + e.Reason + ": " + e.Err.Error()
	}
	return "jsonrpc: decoding message: " + e.Reason
}

func (e *DecodeError) Unwrap() error { return e.Err }

// Is makes every DecodeError match [ErrParse] and [ErrInvalidRequest]
// according to the JSON-RPC code the failure would be answered with.
func (e *DecodeError) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	if e.Err != nil {
		return t.Code == CodeParseError
	}
	return t.Code == CodeInvalidRequest
}
