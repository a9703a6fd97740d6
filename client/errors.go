package client

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// Error reports a failed operation, the way *net.OpError does: which
// operation, what kind of failure, and the cause. Every error [Connect],
// [Dial] and the requests of a [Client] (CallTool, the listings,
// Subscribe, …) return is an *Error; a tool's own failure is not an error
// but a result ([protocol.CallToolResult.Failed]).
//
// Err is the cause as the layer below reported it: what the server
// answered is a *jsonrpc.Error (matched by code, for example
// errors.Is(err, jsonrpc.ErrInvalidParams)); the failures of the
// negotiation and transport packages keep their types, so errors.As with
// *negotiation.Error, *transport.HTTPError, *transport.ExitError and the
// others works through an *Error, and so does errors.Is with
// context.Canceled. The sentinels of this package are in Err's chain
// too: when the failure matches one the cause does not, Err wraps the
// cause (with its text) and the sentinel; an *Error built elsewhere
// matches a sentinel only when its Err wraps it. A failed negotiation's
// steps are in Trace.
type Error struct {
	// Op is the operation: "connect" for [Connect] and [Dial], else the
	// MCP method of the request that failed (for example "tools/call").
	Op string
	// Kind classifies the failure.
	Kind Kind
	// Err is the cause, with the sentinels it matches; never nil.
	Err error
	// Trace is, for a failed negotiation ([Connect], [Dial], or a
	// connection that could not be restored), every negotiation step
	// taken; nil otherwise.
	Trace []TraceStep
}

// Error returns "client: ", the operation, then the cause's text without
// the package prefixes of the layers below (see the package
// documentation's # Errors).
func (e *Error) Error() string {
	return "client: " + e.Op + ": " + plainText(e.Err.Error())
}

// layerPrefixes are the prefixes the errors of the layers below start
// their texts with (the engine's own texts have none left; the transport
// and negotiation packages keep theirs for callers that use them alone).
var layerPrefixes = []string{"client: ", "session: ", "engine: ", "negotiation: ", "transport: "}

// plainText is s without the layer prefixes at its start and at the start
// of each part of it: after ": ", "; " and "(".
func plainText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if atPartStart(b.String()) {
			if p := layerPrefix(s[i:]); p != "" {
				i += len(p)
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String()
}

func atPartStart(done string) bool {
	return done == "" || strings.HasSuffix(done, ": ") || strings.HasSuffix(done, "; ") || strings.HasSuffix(done, "(")
}

func layerPrefix(s string) string {
	for _, p := range layerPrefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// withSentinels is the Err of an *Error whose failure matches sentinels
// of this package that its cause does not: errs is the cause, then those
// sentinels. Its text is the cause's.
type withSentinels struct {
	errs []error
}

func (w *withSentinels) Error() string   { return w.errs[0].Error() }
func (w *withSentinels) Unwrap() []error { return w.errs }

// causeOf is err without the sentinels withKindSentinels added.
func causeOf(err error) error {
	if w, ok := err.(*withSentinels); ok {
		return w.errs[0]
	}
	return err
}

// withKindSentinels is the one place that decides which sentinels an
// *Error of kind k caused by err matches: [ErrClosed] for [KindClosed]
// (or a cause that is the engine's closing), [ErrAuthRequired] for
// [KindAuth], [ErrNotSupported] for [KindUnsupported],
// [ErrNoCommonVersion] when client and server share no protocol version,
// [ErrOutcomeUnknown] when a request the server may have executed was
// lost and not sent again (see [ReplayPolicy]), and [ErrNotSent] when a
// request no server saw could not be sent. It returns err with
// those err does not match yet.
func withKindSentinels(k Kind, err error) error {
	err = causeOf(err)
	errs := []error{err}
	for _, s := range [...]struct {
		sentinel error
		matches  bool
	}{
		{ErrClosed, k == KindClosed || errors.Is(err, engine.ErrClosed)},
		{ErrAuthRequired, k == KindAuth},
		{ErrNotSupported, k == KindUnsupported},
		{ErrNoCommonVersion, noCommonVersion(err)},
		{ErrOutcomeUnknown, errors.Is(err, engine.ErrOutcomeUnknown)},
		{ErrNotSent, errors.Is(err, engine.ErrNotSent)},
	} {
		if s.matches && !errors.Is(err, s.sentinel) {
			errs = append(errs, s.sentinel)
		}
	}
	if len(errs) == 1 {
		return err
	}
	return &withSentinels{errs: errs}
}

// Kind classifies an [*Error]. The kinds are stable: new kinds may be
// added, a kind is never renamed or given another meaning.
type Kind int

// The kinds, from the caller's side of the connection outwards.
const (
	// KindOther is a failure no other kind describes.
	KindOther Kind = iota
	// KindCanceled: the caller's context was cancelled (the error
	// matches context.Canceled), or a task ended cancelled (it does not:
	// the server or another client cancelled the task, not the caller).
	KindCanceled
	// KindTimeout: a deadline, a request timeout or a task's ttl elapsed
	// (a task's ttl does not match context.DeadlineExceeded: no deadline
	// of the caller's elapsed).
	KindTimeout
	// KindClosed: the client or its connection is closed.
	KindClosed
	// KindInvalid: the caller's input is wrong (arguments that are not a
	// JSON object, an unknown tool, a pin of an unknown version, a
	// handler that implements nothing, an answer or result that does not
	// match its schema).
	KindInvalid
	// KindHandler: the handler failed to answer the server's request.
	KindHandler
	// KindProcess: the server process could not be started (for example
	// a missing executable) or exited.
	KindProcess
	// KindNetwork: the server could not be reached or the connection
	// broke (refused, reset, DNS, TLS, a response stream that ended).
	KindNetwork
	// KindHTTP: the server answered with an HTTP status no rule accepts.
	KindHTTP
	// KindAuth: authorization is missing or failed (HTTP 401/403, OAuth
	// flows); the error matches [ErrAuthRequired].
	KindAuth
	// KindNegotiation: no era or version could be agreed; the error
	// matches [ErrNoCommonVersion] when no version is shared.
	KindNegotiation
	// KindUnsupported: the server or the negotiated era does not offer
	// the operation (a capability it did not advertise, a method of the
	// other era); the error matches [ErrNotSupported].
	KindUnsupported
	// KindProtocol: the server broke the protocol (a result that cannot
	// be decoded, a repeated pagination cursor or a listing of more than
	// 1000 pages, a malformed message).
	KindProtocol
	// KindServer: the server answered with a JSON-RPC error (Err holds a
	// *jsonrpc.Error), or a task it ran failed.
	KindServer
)

var kindNames = [...]string{"error", "canceled", "timeout", "closed", "invalid", "handler", "process",
	"network", "http", "auth", "negotiation", "unsupported", "protocol", "server"}

// String returns the kind's stable lower-case name, for example "network".
func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// The sentinels. Match them with errors.Is.
var (
	// ErrClosed is matched by calls on a closed [Client] and by requests
	// that failed because the connection closed (an [*Error] of kind
	// [KindClosed]).
	ErrClosed = errors.New("client: closed")
	// ErrOutcomeUnknown is matched when a request was lost after it may
	// have reached the server: the server may have executed the request,
	// and the client did not send it again without consent (see
	// [ReplayPolicy]), or its one replay was lost too ("2 attempts may
	// have run") or could not be sent. The connection heals for the next
	// call. A call that its context, a request timeout or Close ended
	// without an answer after it was written matches it too (beside
	// context.Canceled, KindTimeout or ErrClosed).
	ErrOutcomeUnknown = errors.New("client: outcome unknown: the server may have executed the request")
	// ErrNotSent is matched when a request ended without an answer and
	// no server saw it: it was never written (the server was down and
	// could not be restarted or reached; its context, a request timeout
	// or Close ended it before it was written) or the transport proved
	// it was not taken, and it could not be sent again. It never matches
	// together with [ErrOutcomeUnknown]: the request did not run.
	ErrNotSent = errors.New("client: request not sent")
	// ErrAuthRequired is matched by a failure of authorization (see
	// [KindAuth]).
	ErrAuthRequired = errors.New("client: authorization required")
	// ErrNoCommonVersion is matched when client and server share no
	// protocol version (an *Error of kind [KindNegotiation]), or when a
	// [Pin] names a version this SDK does not speak (kind [KindInvalid]).
	ErrNoCommonVersion = errors.New("client: no common protocol version")
	// ErrNotSupported is matched when an operation has no meaning in the
	// negotiated era (for example tasks/list on a modern server) or the
	// server did not advertise it (see [CapabilityOptions.Strict]).
	ErrNotSupported = errors.New("client: operation not supported")
)

// opError wraps err, the failure of op, in an *Error; nil stays nil and
// an *Error is returned as it is.
func opError(op string, err error) error {
	if err == nil {
		return nil
	}
	if e, ok := errors.AsType[*Error](err); ok {
		if e.Op == "" {
			e.Op = op
		}
		return err
	}
	k := kindOf(err)
	return &Error{Op: op, Kind: k, Err: withKindSentinels(k, err), Trace: negotiationTrace(err)}
}

// fail is opError for a request of c; see onStdio.
func (c *Client) fail(op string, err error) error {
	return onStdio(opError(op, err), c.kind == transport.KindStdio)
}

// connectError is opError for Connect over t; see onStdio.
func connectError(t transport.Transport, err error) error {
	k, _ := t.(transport.Kinder)
	return onStdio(opError("connect", err), k != nil && k.Kind() == transport.KindStdio)
}

// onStdio corrects the kind of err for a stdio transport, where the
// connection is the server process: a lost or closed connection that the
// client did not close is the process going away (KindProcess).
func onStdio(err error, stdio bool) error {
	e, ok := errors.AsType[*Error](err)
	if !ok || !stdio {
		return err
	}
	switch e.Kind {
	case KindNetwork, KindNegotiation, KindClosed:
		if errors.Is(e.Err, transport.ErrClosed) && !errors.Is(e.Err, engine.ErrClosed) {
			e.Kind = KindProcess
			e.Err = withKindSentinels(e.Kind, e.Err)
		}
	}
	return err
}

// newError is an *Error of a known kind made by this package.
func newError(op string, k Kind, format string, args ...any) *Error {
	return &Error{Op: op, Kind: k, Err: withKindSentinels(k, fmt.Errorf(format, args...))}
}

// kindOf classifies a failure of a layer below. The cause nearest the
// caller that decides the kind wins: cancellation and timeouts first,
// then authorization and version negotiation, then what happened to the
// process, network or HTTP exchange, then what the session reported.
func kindOf(err error) Kind {
	switch {
	case errors.Is(err, context.Canceled):
		return KindCanceled
	case isTimeout(err):
		return KindTimeout
	case isAuth(err):
		return KindAuth
	case noCommonVersion(err):
		return KindNegotiation
	case isProcess(err):
		return KindProcess
	case isNetwork(err):
		return KindNetwork
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && !errors.Is(he, transport.ErrSessionExpired) {
		return KindHTTP
	}
	return sessionKind(err)
}

// sessionKind classifies what the session and negotiation layers report.
func sessionKind(err error) Kind {
	if ne, ok := errors.AsType[*negotiation.Error](err); ok {
		switch ne.Kind {
		case negotiation.KindProtocol:
			return KindProtocol
		case negotiation.KindHTTP:
			return KindHTTP
		}
		return KindNegotiation
	}
	switch {
	case isType[*handler.ValidationError](err), errors.Is(err, ErrNoCommonVersion),
		isType[*transport.HeaderValueError](err), isType[*handler.CheckError](err), errors.Is(err, engine.ErrReservedMeta):
		return KindInvalid
	case errors.Is(err, ErrNotSupported):
		return KindUnsupported
	case isType[*engine.InputError](err):
		return KindHandler
	case isType[*engine.ProtocolError](err), isType[*transport.MessageTooLargeError](err):
		return KindProtocol
	case errors.Is(err, jsonrpc.ErrMissingRequiredClientCapability), errors.Is(err, engine.ErrNotModern):
		return KindUnsupported
	case isType[*engine.ConnectionLostError](err), errors.Is(err, transport.ErrStreamBroken),
		errors.Is(err, transport.ErrSessionExpired):
		return KindNetwork
	case isType[*engine.NegotiationError](err):
		// Including a JSON-RPC error answering the handshake: the server
		// refused the era or version asked for.
		return KindNegotiation
	case isType[*jsonrpc.Error](err):
		return KindServer
	case errors.Is(err, ErrClosed), errors.Is(err, engine.ErrClosed), errors.Is(err, transport.ErrClosed):
		return KindClosed
	}
	return KindOther
}

func isType[T error](err error) bool {
	_, ok := errors.AsType[T](err)
	return ok
}

func isTimeout(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, engine.ErrRequestTimeout) {
		return true
	}
	ne, ok := errors.AsType[*transport.NetworkError](err)
	return ok && ne.Timeout()
}

// noCommonVersion reports a negotiation that found no shared version.
func noCommonVersion(err error) bool {
	if isType[*negotiation.UnsupportedProtocolVersionError](err) {
		return true
	}
	ne, ok := errors.AsType[*negotiation.Error](err)
	return ok && ne.Kind == negotiation.KindNoCommonVersion
}

// isProcess reports a server process that could not start or exited.
func isProcess(err error) bool {
	if isType[*transport.ExitError](err) || isType[*exec.Error](err) {
		return true
	}
	pe, ok := errors.AsType[*fs.PathError](err)
	return ok && strings.HasPrefix(pe.Op, "fork/exec")
}

// isNetwork reports a server that could not be reached.
func isNetwork(err error) bool {
	return isType[*transport.NetworkError](err) || isType[*net.OpError](err) || isType[*net.DNSError](err)
}

// isAuth reports a failure of authorization: an HTTP 401 or 403 nobody
// resolved, or an error of an OAuth flow of the auth package.
func isAuth(err error) bool {
	if isType[*engine.AuthRequiredError](err) {
		return true
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok &&
		(he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden) {
		return true
	}
	if isType[*auth.CredentialsRequiredError](err) || isType[*auth.MetadataError](err) ||
		isType[*auth.AuthorizationResponseError](err) || isType[*auth.TokenError](err) ||
		isType[*auth.RegistrationError](err) {
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

// resultError reports a result of method that could not be decoded.
func resultError(method string, err error) *Error {
	return newError(method, KindProtocol, "decoding the result: %v", err)
}

// capabilityError refuses method under [CapabilityOptions.Strict].
func capabilityError(method, capability string) *Error {
	return &Error{Op: method, Kind: KindUnsupported,
		Err: fmt.Errorf("server did not advertise the %q capability: %w", capability, ErrNotSupported)}
}
