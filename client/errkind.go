package client

import (
	"context"
	"errors"
	"net/http"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/session"
	"github.com/conduitmcp/conduit/transport"
)

// The failure types of the layers below, re-exported so that callers
// match every error the client returns with errors.As and errors.Is
// without importing the session or negotiation packages. They are type
// aliases: a *client.NegotiationError is a *session.NegotiationError.
type (
	// NegotiationError reports a failed negotiation (Connect, Dial). Its
	// Trace holds every step taken; Err is the cause (a
	// *[NegotiationFailure], an *[UnsupportedProtocolVersionError], an
	// *[AuthRequiredError], a transport error, a *jsonrpc.Error or the
	// context's error).
	NegotiationError = session.NegotiationError
	// NegotiationFailure is the negotiation rules' verdict that no era
	// could be agreed; its Kind says why.
	NegotiationFailure = negotiation.Error
	// UnsupportedProtocolVersionError reports that client and server share
	// no protocol version; Supported lists the server's versions when it
	// said.
	UnsupportedProtocolVersionError = negotiation.UnsupportedProtocolVersionError
	// AuthRequiredError reports an HTTP 401 or 403 that [Auth.Authorize]
	// (or [WithOAuth]) did not resolve.
	AuthRequiredError = session.AuthRequiredError
	// ConnectionLostError reports a request lost with its connection,
	// response stream or legacy session that was not (or could not be)
	// re-sent; it matches [ErrConnectionLost].
	ConnectionLostError = session.ConnectionLostError
	// RequestTimeoutError reports a request that got no response within
	// its timeout; it matches [ErrRequestTimeout].
	RequestTimeoutError = session.RequestTimeoutError
	// MissingCapabilityError reports a modern server's -32021: the
	// request needs client capabilities this client did not declare.
	MissingCapabilityError = session.MissingCapabilityError
	// ProtocolError reports a server message that breaks the protocol.
	ProtocolError = session.ProtocolError
	// InputError reports a multi-round-trip input request whose handler
	// failed.
	InputError = session.InputError
)

// The sentinels a [*ProtocolError] matches, re-exported: a result that
// breaks the protocol, an input request the client cannot serve, and a
// multi-round-trip request that did not finish within the round limit.
var (
	ErrInvalidResponse        = session.ErrInvalidResponse
	ErrUnexpectedInputRequest = session.ErrUnexpectedInputRequest
	ErrTooManyInputRounds     = session.ErrTooManyInputRounds
)

// The kinds [ErrorKind] returns. They are stable: new kinds may be added,
// but a kind is never renamed or given another meaning.
const (
	KindTimeout            = "timeout"             // a deadline or request timeout elapsed
	KindCanceled           = "canceled"            // the caller's context was cancelled
	KindAuth               = "auth"                // authorization is missing or failed (401/403, OAuth flows)
	KindUnsupportedVersion = "unsupported-version" // no shared protocol version; see UnsupportedProtocolVersionError
	KindNoCommonVersion    = "no-common-version"   // the negotiation found no common version
	KindNegotiation        = "negotiation"         // no era could be agreed (e.g. a modern-only client and a legacy server)
	KindProtocol           = "protocol"            // the server broke the protocol
	KindValidation         = "validation"          // a value did not match its schema (ValidationError)
	KindResult             = "result"              // a result could not be decoded (ResultError)
	KindHTTP               = "http"                // an HTTP status or body no rule accepts
	KindTransport          = "transport"           // the transport failed in a way no rule covers
	KindProcessExit        = "process-exit"        // the server process exited
	KindNetwork            = "network"             // the server could not be reached
	KindCapability         = "capability"          // a capability is missing on either side
	KindConnectionLost     = "connection-lost"     // a request was lost with its connection
	KindInput              = "input"               // the handler failed to answer the server's input request
	KindTask               = "task"                // a task failed or was cancelled (TaskError)
	KindTaskExpired        = "task-expired"        // a task outlived its ttl (TaskExpiredError)
	KindPagination         = "pagination"          // a listing could not be walked (PaginationError)
	KindNotSupported       = "not-supported"       // the operation has no meaning in the negotiated era
	KindUnknownTool        = "unknown-tool"        // the tool is not in the server's list
	KindServer             = "server"              // the server answered with a JSON-RPC error
	KindClosed             = "closed"              // the client or connection is closed
	KindOther              = "error"               // anything else
)

// ErrorKind classifies an error returned by this package (or by the
// layers below it) into one of the stable Kind* strings, for logs,
// metrics and command-line tools. It returns "" for nil. When several
// apply the most specific cause wins, in this order: timeout, canceled,
// auth, unsupported-version, the negotiation verdict (no-common-version,
// protocol, http, transport, negotiation), http, process-exit, network,
// capability, connection-lost, protocol, validation, result, input,
// task-expired, task, pagination, not-supported, unknown-tool, then any
// other failed negotiation (negotiation), a server's JSON-RPC error
// (server; capability for -32021), closed and error.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	var (
		nge  *NegotiationFailure
		upv  *UnsupportedProtocolVersionError
		are  *AuthRequiredError
		ne   *NegotiationError
		mce  *MissingCapabilityError
		cle  *ConnectionLostError
		pe   *ProtocolError
		ie   *InputError
		he   *transport.HTTPError
		xe   *transport.ExitError
		nwe  *transport.NetworkError
		re   *jsonrpc.Error
		cape *CapabilityError
		ve   *ValidationError
		rse  *ResultError
		te   *TaskError
		tee  *TaskExpiredError
		pge  *PaginationError
	)
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, ErrRequestTimeout):
		return KindTimeout
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case errors.As(err, &are), isAuthFlowError(err):
		return KindAuth
	case errors.As(err, &upv):
		return KindUnsupportedVersion
	case errors.As(err, &nge):
		switch nge.Kind {
		case negotiation.KindNoCommonVersion:
			return KindNoCommonVersion
		case negotiation.KindProtocol:
			return KindProtocol
		case negotiation.KindHTTP:
			return KindHTTP
		case negotiation.KindTransport:
			return KindTransport
		}
		return KindNegotiation
	case errors.As(err, &he):
		if he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden {
			return KindAuth
		}
		return KindHTTP
	case errors.As(err, &xe):
		return KindProcessExit
	case errors.As(err, &nwe):
		return KindNetwork
	case errors.As(err, &mce), errors.As(err, &cape):
		return KindCapability
	case errors.As(err, &cle):
		return KindConnectionLost
	case errors.As(err, &pe):
		return KindProtocol
	case errors.As(err, &ve):
		return KindValidation
	case errors.As(err, &rse):
		return KindResult
	case errors.As(err, &ie):
		return KindInput
	case errors.As(err, &tee):
		return KindTaskExpired
	case errors.As(err, &te):
		return KindTask
	case errors.As(err, &pge):
		return KindPagination
	case errors.Is(err, ErrNotSupported):
		return KindNotSupported
	case errors.Is(err, ErrUnknownTool):
		return KindUnknownTool
	case errors.As(err, &ne):
		// Any other failed negotiation, e.g. a JSON-RPC error answering
		// initialize.
		return KindNegotiation
	case errors.As(err, &re):
		if errors.Is(re, jsonrpc.ErrMissingRequiredClientCapability) {
			return KindCapability
		}
		return KindServer
	case errors.Is(err, ErrClosed), errors.Is(err, transport.ErrClosed):
		return KindClosed
	}
	return KindOther
}

// isAuthFlowError reports whether err came from an OAuth flow of the auth
// package.
func isAuthFlowError(err error) bool {
	var (
		cre *auth.CredentialsRequiredError
		me  *auth.MetadataError
		are *auth.AuthorizationResponseError
		te  *auth.TokenError
		re  *auth.RegistrationError
	)
	if errors.As(err, &cre) || errors.As(err, &me) || errors.As(err, &are) || errors.As(err, &te) || errors.As(err, &re) {
		return true
	}
	for _, s := range []error{auth.ErrIssuerMismatch, auth.ErrStateMismatch, auth.ErrPKCEUnsupported, auth.ErrStepUpLimit,
		auth.ErrForbidden, auth.ErrInsecureEndpoint, auth.ErrInteractionRequired} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
