package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/session"
	"github.com/conduitmcp/conduit/transport"
)

// This file is the only one that looks beneath package client: the typed
// errors client.Dial, client.Connect and the calls document
// (*session.NegotiationError, *session.AuthRequiredError, the
// negotiation package's *Error, …) are declared in session and
// negotiation, and errors.As needs their types to say what kind of
// failure it was and to recover the negotiation trace of a failed probe.

// toolError reports a tool result with isError set (exit status 4).
type toolError struct {
	tool string
	text string // the result's text, for the message
}

func (e *toolError) Error() string {
	s := fmt.Sprintf("tool %q returned an error (isError)", e.tool)
	if e.text != "" {
		s += ": " + e.text
	}
	return s
}

// errorKind names the kind of failure for --json and for hints.
func errorKind(ctx context.Context, err error) string {
	var (
		ue   *usageError
		te   *toolError
		he   *transport.HTTPError
		xe   *transport.ExitError
		ne   *transport.NetworkError
		re   *jsonrpc.Error
		nge  *negotiation.Error
		upv  *negotiation.UnsupportedProtocolVersionError
		are  *session.AuthRequiredError
		mce  *session.MissingCapabilityError
		cle  *session.ConnectionLostError
		pe   *session.ProtocolError
		cape *client.CapabilityError
		ve   *client.ValidationError
		ce   *connectError
	)
	switch {
	case errors.As(err, &ue):
		return "usage"
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return "interrupted"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, session.ErrRequestTimeout):
		return "timeout"
	case errors.As(err, &te):
		return "tool-error"
	case errors.As(err, &are), isAuthError(err):
		return "auth"
	case errors.As(err, &upv):
		return "unsupported-version"
	case errors.As(err, &nge):
		switch nge.Kind {
		case negotiation.KindNoCommonVersion:
			return "no-common-version"
		case negotiation.KindProtocol:
			return "protocol"
		case negotiation.KindHTTP:
			return "http"
		case negotiation.KindTransport:
			return "transport"
		}
		return "negotiation"
	case errors.As(err, &he):
		if he.StatusCode == 401 || he.StatusCode == 403 {
			return "auth"
		}
		return "http"
	case errors.As(err, &xe):
		return "process-exit"
	case errors.As(err, &ne):
		return "network"
	case errors.As(err, &mce), errors.As(err, &cape):
		return "capability"
	case errors.As(err, &cle):
		return "connection-lost"
	case errors.As(err, &pe), errors.As(err, &ve):
		return "protocol"
	case errors.As(err, &ce):
		// Any other failure to connect: the server's answers did not lead
		// to an agreed era (e.g. a JSON-RPC error to initialize).
		return "negotiation"
	case errors.As(err, &re):
		if errors.Is(re, jsonrpc.ErrMissingRequiredClientCapability) {
			return "capability"
		}
		return "rpc"
	case errors.Is(err, client.ErrClosed), errors.Is(err, transport.ErrClosed):
		return "closed"
	}
	return "error"
}

// errorJSON is the "error" member of --json output.
func errorJSON(ctx context.Context, err error) map[string]any {
	m := map[string]any{"kind": errorKind(ctx, err), "message": oneLine(describeError(err))}
	var re *jsonrpc.Error
	if errors.As(err, &re) {
		m["code"] = re.Code
		if len(re.Data) > 0 && json.Valid(re.Data) {
			m["data"] = re.Data
		}
	}
	var he *transport.HTTPError
	if errors.As(err, &he) {
		m["status"] = he.StatusCode
	}
	var upv *negotiation.UnsupportedProtocolVersionError
	if errors.As(err, &upv) && len(upv.Supported) > 0 {
		m["supported"] = upv.Supported
	}
	return m
}

// isAuthError reports whether err came from the OAuth flow.
func isAuthError(err error) bool {
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

// failedTrace returns the negotiation trace carried by a failed Dial or
// Connect, or nil.
func failedTrace(err error) []client.TraceStep {
	var ne *session.NegotiationError
	if errors.As(err, &ne) {
		return ne.Trace
	}
	return nil
}

// describeError returns err's text with a hint when conduit knows what
// the user can do about it.
func describeError(err error) string {
	s := err.Error()
	if hint := errorHint(err); hint != "" {
		s += " (" + hint + ")"
	}
	return s
}

func errorHint(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "the --timeout elapsed"
	}
	var are *session.AuthRequiredError
	if errors.As(err, &are) {
		return "the server wants authorization: use --auth browser|device|client-credentials, or pass a token with --header \"Authorization: Bearer TOKEN\""
	}
	var xe *transport.ExitError
	if errors.As(err, &xe) && xe.Stderr == "" {
		return "run with -v to see the server's stderr"
	}
	if caps := requiredCapabilities(err); len(caps) > 0 {
		var hints []string
		for _, c := range caps {
			switch c {
			case "sampling":
				hints = append(hints, "the server needs sampling (an LLM completion), which conduit refuses unless --sampling-command CMD names a program that answers it")
			case "elicitation":
				hints = append(hints, "the server needs elicitation, which conduit answers only in call, prompt and read")
			case "roots":
				hints = append(hints, "the server needs roots, which conduit does not offer")
			default:
				hints = append(hints, "the server needs the client capability "+c)
			}
		}
		return strings.Join(hints, "; ")
	}
	return ""
}

// requiredCapabilities returns the client capabilities a server said a
// request needs (-32021 in the modern era; some legacy servers put the
// same data on -32602), sorted.
func requiredCapabilities(err error) []string {
	var mce *session.MissingCapabilityError
	if errors.As(err, &mce) {
		var names []string
		if mce.Required.Sampling != nil {
			names = append(names, "sampling")
		}
		if mce.Required.Elicitation != nil {
			names = append(names, "elicitation")
		}
		if mce.Required.Roots != nil {
			names = append(names, "roots")
		}
		if len(names) > 0 {
			return names
		}
	}
	var re *jsonrpc.Error
	if !errors.As(err, &re) || len(re.Data) == 0 {
		return nil
	}
	var data struct {
		Required map[string]json.RawMessage `json:"requiredCapabilities"`
	}
	if json.Unmarshal(re.Data, &data) != nil {
		return nil
	}
	names := make([]string, 0, len(data.Required))
	for k := range data.Required {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}
