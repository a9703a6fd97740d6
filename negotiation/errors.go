package negotiation

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// ErrorKind classifies an [*Error].
type ErrorKind int

// The error kinds.
const (
	// KindProtocol: the server sent something the protocol does not allow
	// (an invalid DiscoverResult, no mutual modern version, a -32020 or
	// -32021 answer to the probe).
	KindProtocol ErrorKind = iota
	// KindNoCommonVersion: client and server share no protocol version.
	KindNoCommonVersion
	// KindNegotiation: the outcome would have fallen back to the legacy
	// initialize handshake, but the client has no fallback (modern-only or
	// pinned).
	KindNegotiation
	// KindHTTP: an HTTP answer none of the rows accepts (e.g. 302, 415, or
	// 200 without a JSON-RPC response).
	KindHTTP
	// KindTransport: the outcome cannot occur on this transport, or the
	// transport failed in a way no row covers.
	KindTransport
)

// String returns the kind's name, e.g. "protocol".
func (k ErrorKind) String() string {
	switch k {
	case KindProtocol:
		return "protocol"
	case KindNoCommonVersion:
		return "no common version"
	case KindNegotiation:
		return "negotiation"
	case KindHTTP:
		return "http"
	case KindTransport:
		return "transport"
	}
	return "ErrorKind(" + strconv.Itoa(int(k)) + ")"
}

// Reasons carried by [Error.Reason]. Legacy-row words (see [Verdict].Reason)
// are used as the reason of a [KindNegotiation] error.
const (
	// ReasonInvalidDiscoverResult: a server/discover result that breaks the
	// required shape.
	ReasonInvalidDiscoverResult = "invalid discover result"
	// ReasonNoMutualModernVersion: a valid DiscoverResult whose
	// supportedVersions shares no modern version with the client.
	ReasonNoMutualModernVersion = "no mutual modern version"
	// ReasonNoCommonVersion: no version in common at all.
	ReasonNoCommonVersion = "no common version"
	// ReasonModernError: the probe was answered with -32020 or -32021.
	ReasonModernError = "modern error"
	// ReasonUnexpectedStatus: an HTTP status no row accepts.
	ReasonUnexpectedStatus = "unexpected HTTP status"
	// ReasonNoResponse: a 2xx HTTP answer without a JSON-RPC response.
	ReasonNoResponse = "no JSON-RPC response"
	// ReasonUnexpectedOutcome: an outcome that cannot occur on this
	// transport, or an outcome missing its payload.
	ReasonUnexpectedOutcome = "unexpected outcome"
)

// Error is a negotiation failure. Kind says which; Code and Status carry
// the JSON-RPC code and the HTTP status of the evidence when there was one;
// Err is the underlying error (a *jsonrpc.Error, an
// [*UnsupportedProtocolVersionError], a transport error, …) when known.
type Error struct {
	Kind   ErrorKind
	Reason string
	Code   int64
	Status int
	Err    error
}

// Error implements the error interface.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("negotiation: ")
	if e.Kind == KindNegotiation {
		fmt.Fprintf(&b, "legacy server evidence (%s) but no legacy fallback", e.Reason)
	} else {
		b.WriteString(e.Kind.String())
		if e.Reason != "" && e.Reason != e.Kind.String() {
			b.WriteString(": ")
			b.WriteString(e.Reason)
		}
	}
	if e.Code != 0 {
		fmt.Fprintf(&b, " (code %d)", e.Code)
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, " (HTTP status %d)", e.Status)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }

// UnsupportedProtocolVersionError reports that the server and the client
// share no usable version. It is built from the server's evidence (the
// data of a -32022 error or a DiscoverResult's supportedVersions).
type UnsupportedProtocolVersionError struct {
	// Supported is what the server supports, in its order; nil when the
	// evidence did not say.
	Supported []string
	// Requested is the version the client asked for.
	Requested string
}

// Error implements the error interface.
func (e *UnsupportedProtocolVersionError) Error() string {
	return fmt.Sprintf("negotiation: unsupported protocol version %q (server supports %s)",
		e.Requested, "["+strings.Join(e.Supported, ", ")+"]")
}

// Is reports whether target is [jsonrpc.ErrUnsupportedProtocolVersion] (any
// *jsonrpc.Error with code -32022).
func (e *UnsupportedProtocolVersionError) Is(target error) bool {
	return jsonrpc.ErrUnsupportedProtocolVersion.Is(target)
}
