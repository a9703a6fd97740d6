package engine

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// The texts of this package's errors name no package and no method: the
// client wraps each in a *client.Error, whose text gives the operation
// once ("client: tools/call: connection lost: …"; see the client
// package's # Errors).

// ErrClosed is returned by calls on a closed session and by calls that were
// pending when [Session.Close] ran.
var ErrClosed = errors.New("closed")

// ErrNotModern is returned by operations that exist only in the modern
// era, such as [Session.Listen], on a legacy session.
var ErrNotModern = errors.New("operation needs the modern era")

// ErrStreamOverflow ends a listen [Stream] whose consumer fell more than
// [StreamBuffer] notifications behind.
var ErrStreamOverflow = errors.New("listen stream overflowed")

// Sentinels matched by [*ProtocolError] (errors.Is).
var (
	// ErrInvalidResponse: the server's result breaks the protocol (an
	// unknown resultType, input_required on a method that does not allow
	// it, a malformed InputRequiredResult).
	ErrInvalidResponse = errors.New("invalid response")
	// ErrUnexpectedInputRequest: an MRTR input request for a method the
	// client does not serve or a capability it did not declare.
	ErrUnexpectedInputRequest = errors.New("unexpected input request")
	// ErrTooManyInputRounds: MRTR did not finish within
	// [Config.MaxInputRounds] rounds.
	ErrTooManyInputRounds = errors.New("too many input rounds")
)

// ErrOutcomeUnknown is matched by [*OutcomeUnknownError]: a request was
// lost after it may have reached the server, which may have executed it,
// and the replay policy did not allow sending it again, or its replay was
// lost too (or could not be sent); or its caller (its context, a request
// timeout, Close) ended it without an answer after it was written.
var ErrOutcomeUnknown = errors.New("outcome unknown: the server may have executed the request")

// OutcomeUnknownError reports a request lost with its connection, response
// stream or session after it was written, or answered with an HTTP 500,
// 502, 504 or another 5xx that does not say the server did not take it,
// that was not sent again (see [ReplayPolicy]), or whose replay was lost
// too or could not be sent: the server may have executed it, Attempts
// times at most. The connection heals for the next call. It also reports
// a call its caller ended after it was written (Err is then the context's
// error, a [*RequestTimeoutError] or [ErrClosed]). It matches
// [ErrOutcomeUnknown], and through Err [ErrConnectionLost], the
// [*transport.HTTPError] or what ended the call.
type OutcomeUnknownError struct {
	// Method is the request's method.
	Method string
	// Err is the loss (a [*ConnectionLostError]) or the HTTP error (a
	// [*transport.HTTPError] 500, 502, 504, ...) after which the request
	// was not sent again.
	Err error
	// Attempts is how many attempts of the request may have run: 1, or 2
	// when a replay was lost too (see [ReplayPolicy]).
	Attempts int
	// Reason is the evidence that decided, in words, e.g. "the stdio
	// process exited after the request was written; not sent again: the
	// replay policy is none".
	Reason string
}

// Error implements the error interface.
func (e *OutcomeUnknownError) Error() string {
	s := "outcome unknown, the server may have executed the request"
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (%d attempts may have run)", e.Attempts)
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	return s + ": " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *OutcomeUnknownError) Unwrap() error { return e.Err }

// Is matches [ErrOutcomeUnknown].
func (e *OutcomeUnknownError) Is(target error) bool { return target == ErrOutcomeUnknown }

// ProtocolError reports a server message that breaks the protocol. Err is
// one of the sentinels [ErrInvalidResponse], [ErrUnexpectedInputRequest],
// [ErrTooManyInputRounds].
type ProtocolError struct {
	// Method is the request the message answered.
	Method string
	// Reason says what was wrong.
	Reason string
	// Err is the sentinel (and detail).
	Err error
}

// Error implements the error interface.
func (e *ProtocolError) Error() string {
	return describeErr("protocol error", "", "", e.Reason, e.Err)
}

// describeErr is an error's text: s, then sep and what when what is set,
// then ": " and detail when detail is set, then ": " and err's text when
// err is set.
func describeErr(s, sep, what, detail string, err error) string {
	if what != "" {
		s += sep + what
	}
	if detail != "" {
		s += ": " + detail
	}
	if err != nil {
		s += ": " + err.Error()
	}
	return s
}

// Unwrap returns e.Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

// ErrRequestTimeout is matched by [*RequestTimeoutError].
var ErrRequestTimeout = errors.New("request timed out")

// RequestTimeoutError reports a request that got no response within its
// deadline ([Config.RequestTimeout], [CallOptions.Timeout]: counted from the
// call's start, progress does not extend it) or its idle timeout
// ([Config.IdleTimeout], [CallOptions.IdleTimeout]: reset on progress).
type RequestTimeoutError struct {
	// Method is the request's method.
	Method string
	// Timeout is the limit that elapsed.
	Timeout time.Duration
	// Absolute is true when the deadline elapsed, false for the idle
	// timeout.
	Absolute bool
}

// Error implements the error interface.
func (e *RequestTimeoutError) Error() string {
	kind := "idle timeout"
	if e.Absolute {
		kind = "deadline"
	}
	return fmt.Sprintf("no response within the %s of %v", kind, e.Timeout)
}

// Is matches [ErrRequestTimeout].
func (e *RequestTimeoutError) Is(target error) bool { return target == ErrRequestTimeout }

// ErrConnectionLost is matched by [*ConnectionLostError].
var ErrConnectionLost = errors.New("connection lost")

// ErrNotSent is matched by a [*ConnectionLostError] whose request no
// server saw ([ConnectionLostError.Unsent]): it was never written, or the
// transport proved that it was not taken, and it could not be sent again
// (the heal failed, the dial was refused); and by the error of a call its
// caller ended (its context, a request timeout, Close) before any attempt
// of it was written, which also matches what ended it. It never matches
// [ErrOutcomeUnknown].
var ErrNotSent = errors.New("request not sent")

// ConnectionLostError reports a request that was in flight when its
// connection (or its response stream, or its legacy HTTP session) was lost
// and that was not, or could not be, re-sent.
type ConnectionLostError struct {
	// Method is the request's method ("" when not tied to one).
	Method string
	// Err is the transport's error (a *transport.ExitError,
	// *transport.StreamError, an error matching transport.ErrSessionExpired…).
	Err error
	// Unsent is true when no server saw the request: it was never
	// written (the connection was closed before the write, the heal
	// failed while it waited) or the transport proved it was not taken
	// (a refused dial). It then matches [ErrNotSent].
	Unsent bool
	// Reason is, for an unsent request, the evidence in words, e.g. "the
	// session could not be restored, so the request was never written".
	Reason string
}

// Error implements the error interface. It says whether the request was
// written: one lost before it was sent never reached the server (and
// why, from Reason).
func (e *ConnectionLostError) Error() string {
	if e.Unsent {
		return describeErr("connection lost before the request was sent", "", "", e.Reason, e.Err)
	}
	return describeErr("connection lost", "", "", "", e.Err)
}

// Unwrap returns e.Err.
func (e *ConnectionLostError) Unwrap() error { return e.Err }

// Is matches [ErrConnectionLost], and [ErrNotSent] when Unsent.
func (e *ConnectionLostError) Is(target error) bool {
	return target == ErrConnectionLost || e.Unsent && target == ErrNotSent
}

// unsentError is the error of a call that its caller ended (its context,
// a request timeout, Close) before any attempt of it was written: no
// server saw it. It matches [ErrNotSent]; Err is what ended it.
type unsentError struct {
	Method string
	Reason string
	Err    error
}

func (e *unsentError) Error() string {
	return "request not sent (" + e.Reason + "): " + e.Err.Error()
}

func (e *unsentError) Unwrap() error { return e.Err }

func (e *unsentError) Is(target error) bool { return target == ErrNotSent }

// MissingCapabilityError reports a modern server's -32021: the request
// needs client capabilities this client did not declare.
type MissingCapabilityError struct {
	// Method is the request's method.
	Method string
	// Required is data.requiredCapabilities from the error.
	Required protocol.ClientCapabilities
	// Err is the server's error; errors.Is(err,
	// jsonrpc.ErrMissingRequiredClientCapability) holds.
	Err *jsonrpc.Error
}

// Error implements the error interface.
func (e *MissingCapabilityError) Error() string {
	var names []string
	r := e.Required
	if r.Sampling != nil {
		names = append(names, "sampling")
	}
	if r.Elicitation != nil {
		names = append(names, "elicitation")
	}
	if r.Roots != nil {
		names = append(names, "roots")
	}
	for k := range r.Extensions {
		names = append(names, "extension "+k)
	}
	for k := range r.Experimental {
		names = append(names, "experimental "+k)
	}
	return fmt.Sprintf("the server requires client capabilities [%s]: %v", strings.Join(names, ", "), e.Err)
}

// Unwrap returns the server's error.
func (e *MissingCapabilityError) Unwrap() error { return e.Err }

// InputError reports a request whose handler failed one of its input
// requests, with the same text in both eras. Modern era: an MRTR input
// request whose handler failed; the request was abandoned without a retry
// (OPEN-QUESTIONS C18). Legacy era: a server request tied to the call
// (see tie.go) whose handler failed, after which the server failed the
// call with a JSON-RPC error (in Server).
type InputError struct {
	// Method is the original request's method.
	Method string
	// Key is the inputRequests key (modern era); "" in the legacy era.
	Key string
	// InputMethod is the input request's method, e.g. sampling/createMessage.
	InputMethod string
	// Err is the handler's error.
	Err error
	// Server is, in the legacy era, the error the server answered the
	// original request with; nil in the modern era. It is not part of
	// the message.
	Server *jsonrpc.Error
}

// Error implements the error interface.
func (e *InputError) Error() string {
	return fmt.Sprintf("input request %s failed: %v", e.InputMethod, e.Err)
}

// Unwrap returns the handler's error, and the server's error when there
// is one.
func (e *InputError) Unwrap() []error {
	if e.Server == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Server}
}

// AuthRequiredError reports an HTTP 401 or 403, during negotiation or on a
// request, when [Config.Authorize] is nil or did not help within its
// bounded attempts.
type AuthRequiredError struct {
	// Status is 401 or 403.
	Status int
	// Challenge is the WWW-Authenticate header.
	Challenge string
	// Err is the HTTP answer.
	Err *transport.HTTPError
}

// Error implements the error interface.
func (e *AuthRequiredError) Error() string {
	s := fmt.Sprintf("authorization required (HTTP %d)", e.Status)
	if e.Challenge != "" {
		s += ": " + e.Challenge
	}
	return s
}

// Unwrap returns the HTTP error.
func (e *AuthRequiredError) Unwrap() error {
	if e.Err == nil {
		return nil
	}
	return e.Err
}

// NegotiationError reports a failed negotiation. Err is the cause: a
// [*negotiation.Error], a [*negotiation.UnsupportedProtocolVersionError],
// an [*AuthRequiredError], a transport error, a *jsonrpc.Error, or the
// context's error.
type NegotiationError struct {
	// Mode is the configured mode.
	Mode Mode
	// Trace is every step taken.
	Trace []TraceStep
	// Err is the cause.
	Err error
}

// Error implements the error interface.
func (e *NegotiationError) Error() string {
	return "negotiating protocol (" + e.Mode.String() + "): " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *NegotiationError) Unwrap() error { return e.Err }

// fallbackError is a negotiation whose HTTP+SSE fallback failed too. It
// names, and unwraps first to, the request that failed first (the
// Streamable HTTP initialize POST), so that errors.As finds that
// request's *transport.HTTPError; the fallback's failure follows.
type fallbackError struct {
	first, fallback error
}

func (e *fallbackError) Error() string {
	return e.first.Error() + " (the HTTP+SSE fallback failed too: " + e.fallback.Error() + ")"
}

func (e *fallbackError) Unwrap() []error { return []error{e.first, e.fallback} }

// joinErrs is errors.Join on one line: the texts of the non-nil errs
// joined by "; " (an error's text stays one line); nil when all are nil.
func joinErrs(errs ...error) error {
	var j joinedError
	for _, err := range errs {
		if err != nil {
			j.errs = append(j.errs, err)
		}
	}
	if len(j.errs) == 0 {
		return nil
	}
	return &j
}

// joinedError is the error of joinErrs.
type joinedError struct{ errs []error }

func (e *joinedError) Error() string {
	var b strings.Builder
	for i, err := range e.errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(err.Error())
	}
	return b.String()
}

func (e *joinedError) Unwrap() []error { return e.errs }
