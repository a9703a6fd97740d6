package client

import (
	"errors"
	"fmt"
	"strings"

	"github.com/conduitmcp/conduit/session"
)

// ErrClosed is returned by calls on a closed [Client]. It is the session
// layer's sentinel, so errors.Is(err, client.ErrClosed) matches errors from
// every layer below.
var ErrClosed = session.ErrClosed

// Session sentinels, re-exported so callers need not import the session
// package: a request that timed out (ErrRequestTimeout, matched by
// [*RequestTimeoutError]) and one lost with its connection that
// could not be re-sent (ErrConnectionLost, matched by
// [*ConnectionLostError]).
var (
	ErrRequestTimeout = session.ErrRequestTimeout
	ErrConnectionLost = session.ErrConnectionLost
)

// ErrNotSupported is returned (wrapped) when an operation has no meaning in
// the negotiated era, for example tasks/list on a modern server.
var ErrNotSupported = errors.New("client: operation not supported in this protocol era")

// ErrUnknownTool is returned (wrapped) by [CallToolAs] when the tool is not
// in the server's tools list.
var ErrUnknownTool = errors.New("client: unknown tool")

// ErrCursorLoop and ErrTooManyPages are the reasons of a [*PaginationError].
var (
	ErrCursorLoop   = errors.New("client: server repeated a pagination cursor")
	ErrTooManyPages = errors.New("client: too many pages")
)

// PaginationError reports a listing that could not be walked to its end:
// the server sent a cursor it had already sent ([ErrCursorLoop]) or the
// page cap was reached ([ErrTooManyPages]).
type PaginationError struct {
	// Method is the list method, e.g. "tools/list".
	Method string
	// Cursor is the offending cursor.
	Cursor string
	// Pages is how many pages were read.
	Pages int
	// Err is ErrCursorLoop or ErrTooManyPages.
	Err error
}

func (e *PaginationError) Error() string {
	return fmt.Sprintf("client: %s after %d pages (cursor %q): %v", e.Method, e.Pages, e.Cursor, e.Err)
}

// Unwrap returns the reason.
func (e *PaginationError) Unwrap() error { return e.Err }

// CapabilityError is returned by a call the server did not advertise when
// [WithStrictCapabilities] is set.
type CapabilityError struct {
	// Method is the refused method.
	Method string
	// Capability is the missing server capability, e.g. "tools" or
	// "resources.subscribe".
	Capability string
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("client: %s: server did not advertise the %q capability", e.Method, e.Capability)
}

// ValidationError reports a value that does not match its schema: a tool's
// structuredContent against its outputSchema ([CallToolAs]), or an
// elicitation answer against the requested schema.
type ValidationError struct {
	// Subject names what was validated, e.g. `tool "add" structuredContent`.
	Subject string
	// Problems lists what is wrong, one entry per violation.
	Problems []string
	// Err is the underlying validator or decoding error, if any.
	Err error
}

func (e *ValidationError) Error() string {
	s := "client: invalid " + e.Subject
	if len(e.Problems) > 0 {
		s += ": " + strings.Join(e.Problems, "; ")
	} else if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *ValidationError) Unwrap() error { return e.Err }

// ResultError reports a result the server sent that could not be decoded
// into its expected shape.
type ResultError struct {
	// Method is the request's method.
	Method string
	// Err is the decoding error.
	Err error
}

func (e *ResultError) Error() string {
	return fmt.Sprintf("client: decoding %s result: %v", e.Method, e.Err)
}

// Unwrap returns the decoding error.
func (e *ResultError) Unwrap() error { return e.Err }
