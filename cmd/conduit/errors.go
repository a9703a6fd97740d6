package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// This file is the only one that looks beneath package client: the
// causes a *client.Error carries (*engine.NegotiationError,
// *engine.MissingCapabilityError, the negotiation package's
// *UnsupportedProtocolVersionError, …) are declared in session and
// negotiation, and errors.As needs their types to recover the details
// (the negotiation trace of a failed probe, the capabilities a server
// wants, the versions it supports).

// traceStep is one step of a negotiation trace, as
// (*client.Client).Negotiated reports it.
type traceStep = client.TraceStep

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

// errorKind names the kind of failure for --json and for hints: the
// CLI's own kinds (usage, interrupted, tool-error), then the Kind of the
// *client.Error (network, process, auth, negotiation, server, …).
func errorKind(ctx context.Context, err error) string {
	var (
		ue *usageError
		te *toolError
		ce *client.Error
	)
	switch {
	case errors.As(err, &ue):
		return "usage"
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled):
		return "interrupted"
	case errors.As(err, &te):
		return "tool-error"
	case errors.As(err, &ce):
		return ce.Kind.String()
	}
	return client.KindOther.String()
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

// failedTrace returns the negotiation trace carried by a failed Dial or
// Connect, or nil.
func failedTrace(err error) []traceStep {
	var ce *client.Error
	if errors.As(err, &ce) {
		return ce.Trace
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
	if errors.Is(err, client.ErrAuthRequired) {
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
	var mce *engine.MissingCapabilityError
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
