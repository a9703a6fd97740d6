package negotiation

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/conduitmcp/conduit/internal/jsonscan"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// TransportKind is the transport class a probe ran on. Anything that is not
// the stdio child-process transport is classified like HTTP.
type TransportKind int

// The transport kinds.
const (
	// TransportStdio is the stdio child-process transport.
	TransportStdio TransportKind = iota
	// TransportHTTP is Streamable HTTP (and every non-stdio transport).
	TransportHTTP
)

// String returns "stdio" or "http".
func (k TransportKind) String() string {
	if k == TransportStdio {
		return "stdio"
	}
	return "http"
}

// OutcomeKind says what a probe exchange produced.
type OutcomeKind int

// The outcome kinds.
const (
	// OutcomeResult: a JSON-RPC success response; Outcome.Result holds it.
	OutcomeResult OutcomeKind = iota
	// OutcomeRPCError: a JSON-RPC error response; Outcome.Error holds it.
	// On HTTP this is a 2xx-bodied error.
	OutcomeRPCError
	// OutcomeTimeout: no response within the probe timeout.
	OutcomeTimeout
	// OutcomeExited: the stdio server process exited (or closed stdout)
	// during the probe; Outcome.Err may say how.
	OutcomeExited
	// OutcomeHTTP: an HTTP answer the transport did not turn into a
	// response by itself (non-2xx, or a body it did not decode): Status,
	// ContentType and Body (or Response) describe it.
	OutcomeHTTP
	// OutcomeTransportError: the exchange failed below JSON-RPC (a network
	// error); Outcome.Err holds it.
	OutcomeTransportError
)

// String returns the kind's name, e.g. "rpc-error".
func (k OutcomeKind) String() string {
	switch k {
	case OutcomeResult:
		return "result"
	case OutcomeRPCError:
		return "rpc-error"
	case OutcomeTimeout:
		return "timeout"
	case OutcomeExited:
		return "exited"
	case OutcomeHTTP:
		return "http"
	case OutcomeTransportError:
		return "transport-error"
	}
	return "OutcomeKind(" + strconv.Itoa(int(k)) + ")"
}

// Outcome is the normalized outcome of a server/discover probe.
type Outcome struct {
	// Kind says which of the fields below are meaningful.
	Kind OutcomeKind
	// Result is the raw result (OutcomeResult). A Modern verdict's
	// Discover.Raw is Result itself, not a copy: neither may change once
	// classified.
	Result json.RawMessage
	// Error is the JSON-RPC error (OutcomeRPCError).
	Error *jsonrpc.Error
	// Status, ContentType and Body describe an OutcomeHTTP answer. Body is
	// the raw body, decoded here as an event stream (text/event-stream) or
	// as JSON (any other content type).
	Status      int
	ContentType string
	Body        []byte
	// Response is an already decoded JSON-RPC response (OutcomeHTTP);
	// when set, Body is not read. Its Result, like Result above, is a
	// Modern verdict's Discover.Raw.
	Response *jsonrpc.Response
	// Err is the detail of OutcomeTransportError and OutcomeExited.
	Err error
}

// ProbeContext is what the classifier needs to know about the client.
type ProbeContext struct {
	// ClientVersions are the versions the client speaks, in preference
	// order; nil or empty means [Versions]. Only modern entries count for
	// modern verdicts, only legacy ones for a legacy version named by a
	// -32022.
	ClientVersions []string
	// RequestedVersion is the version the probe carried in its _meta; it
	// fills UnsupportedProtocolVersionError.Requested when the evidence
	// does not.
	RequestedVersion string
	// FallbackAvailable is whether a legacy initialize fallback is
	// possible: false for modern-only and pinned clients.
	FallbackAvailable bool
	// Transport is the transport class the probe ran on.
	Transport TransportKind
}

// VerdictKind is what the caller does next.
type VerdictKind int

// The verdict kinds.
const (
	// VerdictModern: definitive modern evidence; use Verdict.Version and
	// continue without initialize.
	VerdictModern VerdictKind = iota
	// VerdictCorrective: -32022 named a mutual modern version; re-send the
	// probe at Verdict.Version exactly once. If the re-probe is rejected
	// with -32022 again, fail with Verdict.Err (the loop guard lives in
	// the caller).
	VerdictCorrective
	// VerdictLegacy: perform the legacy initialize handshake on the same
	// connection, offering Verdict.Version when it is set.
	VerdictLegacy
	// VerdictReconnect: the stdio server exited during the probe; respawn
	// it and go straight to initialize.
	VerdictReconnect
	// VerdictAuthorize: HTTP 401/403; run the authorization flow, then
	// probe again.
	VerdictAuthorize
	// VerdictRetry: a transient failure (HTTP 408/429/5xx, network error,
	// HTTP timeout); retry the probe with backoff. Never a downgrade.
	VerdictRetry
	// VerdictError: a typed connect error in Verdict.Err; never converted
	// into an era.
	VerdictError
)

// String returns the kind's name, e.g. "corrective".
func (k VerdictKind) String() string {
	switch k {
	case VerdictModern:
		return "modern"
	case VerdictCorrective:
		return "corrective"
	case VerdictLegacy:
		return "legacy"
	case VerdictReconnect:
		return "reconnect"
	case VerdictAuthorize:
		return "authorize"
	case VerdictRetry:
		return "retry"
	case VerdictError:
		return "error"
	}
	return "VerdictKind(" + strconv.Itoa(int(k)) + ")"
}

// Verdict is the classifier's decision.
type Verdict struct {
	// Kind is the decision.
	Kind VerdictKind
	// Version is the version to use: the mutual modern version (Modern,
	// Corrective), or the legacy version a -32022 named (Legacy; "" when
	// the evidence named none and initialize offers the client's newest
	// legacy version).
	Version string
	// Discover is the parsed DiscoverResult (Modern).
	Discover *DiscoverResult
	// Status is the HTTP status (Authorize: 401 or 403; Retry: the status,
	// or 0 for a network error or timeout).
	Status int
	// Reason is a short machine word for Legacy, Reconnect and Retry
	// verdicts, e.g. "timeout", "status-503", "network",
	// "method-not-found" (see the Reason… constants).
	Reason string
	// Err is the typed error of an Error verdict (an [*Error] or an
	// [*UnsupportedProtocolVersionError]), the error to report on a second
	// rejection for Corrective, and the transport detail, if any, for
	// Retry and Reconnect.
	Err error
}

// Verdict reasons (Verdict.Reason). HTTP status reasons are "status-" plus
// the status, e.g. "status-404" or "status-503".
const (
	// ReasonTimeout: no answer within the probe timeout.
	ReasonTimeout = "timeout"
	// ReasonNetwork: a network error on HTTP.
	ReasonNetwork = "network"
	// ReasonMethodNotFound: a -32601 answer.
	ReasonMethodNotFound = "method-not-found"
	// ReasonRPCError: any other non-modern JSON-RPC error.
	ReasonRPCError = "rpc-error"
	// ReasonNotDiscoverResult: a result that is not DiscoverResult-shaped.
	ReasonNotDiscoverResult = "not-discover-result"
	// ReasonProcessExited: the stdio server exited during the probe.
	ReasonProcessExited = "process-exited"
	// ReasonLegacyVersionOnly: a -32022 whose data.supported shares only a
	// legacy version with the client.
	ReasonLegacyVersionOnly = "legacy-version-only"
)

func statusReason(status int) string { return "status-" + strconv.Itoa(status) }

// ClassifyProbe classifies the outcome of a server/discover probe; see the
// package documentation for the table. It is pure: loop-guard and retry
// state live in the caller.
func ClassifyProbe(pc ProbeContext, o Outcome) Verdict {
	c := classifier{pc: pc}
	if len(c.pc.ClientVersions) == 0 {
		c.pc.ClientVersions = Versions()
	}
	if pc.Transport == TransportStdio {
		return c.stdio(o)
	}
	return c.http(o)
}

type classifier struct {
	pc ProbeContext
}

func (c classifier) stdio(o Outcome) Verdict {
	switch o.Kind {
	case OutcomeResult:
		return c.result(o.Result, 0)
	case OutcomeRPCError:
		if o.Error == nil {
			return errorVerdict(&Error{Kind: KindProtocol, Reason: ReasonUnexpectedOutcome})
		}
		if IsModernError(o.Error.Code) {
			return c.modernError(o.Error, 0)
		}
		// Any other JSON-RPC error, -32601 and -32602 included, is what a
		// legacy server answers to a pre-initialize request.
		return c.legacyFromError(o.Error, 0)
	case OutcomeTimeout:
		return c.legacy(Verdict{Kind: VerdictLegacy, Reason: ReasonTimeout}, 0, 0)
	case OutcomeExited:
		return c.legacy(Verdict{Kind: VerdictReconnect, Reason: ReasonProcessExited, Err: o.Err}, 0, 0)
	case OutcomeTransportError:
		return errorVerdict(&Error{Kind: KindTransport, Reason: ReasonUnexpectedOutcome, Err: o.Err})
	}
	return errorVerdict(&Error{Kind: KindTransport, Reason: ReasonUnexpectedOutcome + " " + o.Kind.String() + " on stdio", Err: o.Err})
}

func (c classifier) http(o Outcome) Verdict {
	switch o.Kind {
	case OutcomeResult:
		return c.result(o.Result, 0)
	case OutcomeRPCError:
		// A 2xx-bodied error.
		if o.Error == nil {
			return errorVerdict(&Error{Kind: KindProtocol, Reason: ReasonUnexpectedOutcome})
		}
		if IsModernError(o.Error.Code) {
			return c.modernError(o.Error, 0)
		}
		return c.legacyFromError(o.Error, 0)
	case OutcomeTimeout:
		return Verdict{Kind: VerdictRetry, Reason: ReasonTimeout, Err: o.Err}
	case OutcomeTransportError:
		return Verdict{Kind: VerdictRetry, Reason: ReasonNetwork, Err: o.Err}
	case OutcomeHTTP:
		return c.httpAnswer(o)
	}
	return errorVerdict(&Error{Kind: KindTransport, Reason: ReasonUnexpectedOutcome + " " + o.Kind.String() + " on http", Err: o.Err})
}

func (c classifier) httpAnswer(o Outcome) Verdict {
	st := o.Status
	resp := o.Response
	if resp == nil {
		resp = decodeBody(o.ContentType, o.Body)
	}
	// Modern evidence in the body wins over the status rows.
	if resp != nil {
		if resp.Error != nil && IsModernError(resp.Error.Code) {
			return c.modernError(resp.Error, st)
		}
		if resp.Error == nil && discoverShaped(resp.Result) {
			return c.result(resp.Result, st)
		}
		if resp.Error != nil && resp.Error.Code == jsonrpc.CodeMethodNotFound {
			return c.legacyFromError(resp.Error, st)
		}
	}
	switch {
	case st >= 200 && st <= 299:
		if resp == nil {
			return errorVerdict(&Error{Kind: KindHTTP, Reason: ReasonNoResponse, Status: st})
		}
		if resp.Error != nil {
			return c.legacyFromError(resp.Error, st)
		}
		return c.legacy(Verdict{Kind: VerdictLegacy, Reason: ReasonNotDiscoverResult}, 0, st)
	case st == 401 || st == 403:
		return Verdict{Kind: VerdictAuthorize, Status: st}
	case st == 408 || st == 429 || (st >= 500 && st <= 599):
		return Verdict{Kind: VerdictRetry, Status: st, Reason: statusReason(st)}
	case st == 400 || st == 404 || st == 405:
		var code int64
		if resp != nil && resp.Error != nil {
			code = resp.Error.Code
		}
		return c.legacy(Verdict{Kind: VerdictLegacy, Reason: statusReason(st)}, code, st)
	}
	var code int64
	if resp != nil && resp.Error != nil {
		code = resp.Error.Code
	}
	return errorVerdict(&Error{Kind: KindHTTP, Reason: ReasonUnexpectedStatus, Status: st, Code: code})
}

// result classifies a success result: DiscoverResult-shaped results are
// modern evidence, anything else is legacy evidence.
func (c classifier) result(raw json.RawMessage, status int) Verdict {
	d, top, ok := readDiscover(raw)
	if !ok || !top.shaped() {
		return c.legacy(Verdict{Kind: VerdictLegacy, Reason: ReasonNotDiscoverResult}, 0, status)
	}
	d, err := parseDiscover(d, top)
	if err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			e.Status = status
		}
		return errorVerdict(err)
	}
	v, ok := c.mutual(d.SupportedVersions, EraModern)
	if !ok {
		upv := &UnsupportedProtocolVersionError{Supported: d.SupportedVersions, Requested: c.pc.RequestedVersion}
		if !c.pc.FallbackAvailable {
			return errorVerdict(upv)
		}
		return errorVerdict(&Error{Kind: KindProtocol, Reason: ReasonNoMutualModernVersion, Status: status, Err: upv})
	}
	return Verdict{Kind: VerdictModern, Version: v, Discover: d}
}

// modernError classifies -32020, -32021 and -32022. None of them is ever
// legacy evidence.
func (c classifier) modernError(e *jsonrpc.Error, status int) Verdict {
	if e.Code != jsonrpc.CodeUnsupportedProtocolVersion {
		return errorVerdict(&Error{Kind: KindProtocol, Reason: ReasonModernError, Code: e.Code, Status: status, Err: e})
	}
	supported, requested := readVersionData(e.Data) // missing or malformed: none
	upv := &UnsupportedProtocolVersionError{Supported: supported, Requested: c.pc.RequestedVersion}
	if requested != "" {
		upv.Requested = requested
	}
	if v, ok := c.mutual(supported, EraModern); ok {
		return Verdict{Kind: VerdictCorrective, Version: v, Err: upv}
	}
	if !c.pc.FallbackAvailable {
		return errorVerdict(upv)
	}
	if v, ok := c.mutual(supported, EraLegacy); ok {
		return Verdict{Kind: VerdictLegacy, Version: v, Reason: ReasonLegacyVersionOnly}
	}
	return errorVerdict(&Error{Kind: KindNoCommonVersion, Reason: ReasonNoCommonVersion, Code: e.Code, Status: status, Err: upv})
}

// legacyFromError is the legacy row of a non-modern JSON-RPC error.
func (c classifier) legacyFromError(e *jsonrpc.Error, status int) Verdict {
	reason := ReasonRPCError
	if e.Code == jsonrpc.CodeMethodNotFound {
		reason = ReasonMethodNotFound
	}
	return c.legacy(Verdict{Kind: VerdictLegacy, Reason: reason}, e.Code, status)
}

// legacy returns v (a Legacy or Reconnect verdict) when the client can fall
// back, and a KindNegotiation error otherwise.
func (c classifier) legacy(v Verdict, code int64, status int) Verdict {
	if c.pc.FallbackAvailable {
		return v
	}
	return errorVerdict(&Error{Kind: KindNegotiation, Reason: v.Reason, Code: code, Status: status, Err: v.Err})
}

// mutual returns the first client version of era that supported lists.
func (c classifier) mutual(supported []string, era Era) (string, bool) {
	for _, v := range c.pc.ClientVersions {
		if EraOf(v) != era {
			continue
		}
		for _, s := range supported {
			if v == s {
				return v, true
			}
		}
	}
	return "", false
}

func errorVerdict(err error) Verdict { return Verdict{Kind: VerdictError, Err: err} }

// discoverShaped reports whether raw is an object with a resultType or a
// supportedVersions member.
func discoverShaped(raw json.RawMessage) bool {
	rt, sv := false, false
	err := eachMember(raw, func(key, _ []byte) {
		rt = rt || keyIs(key, "resultType")
		sv = sv || keyIs(key, "supportedVersions")
	})
	return err == nil && (rt || sv)
}

// readVersionData reads the supported and requested members of a -32022
// error's data as decoding data into a struct{ Supported
// []json.RawMessage; Requested *string } would (keys matched as
// encoding/json matches field names; a member of the wrong type leaves
// the value before it), keeping the entries of supported that decode into
// a string (null as ""). It walks the list in place: decoding it would
// cost an allocation per entry, gigabytes for a server's list of
// millions.
func readVersionData(data []byte) (supported []string, requested string) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' || jsonscan.Validate(data) != nil {
		return nil, ""
	}
	var list, req jsonscan.Span // the last of each that decodes; null clears
	r := jsonscan.ObjectReader{Data: data, Depth: 1}
	for {
		key, val, ok, err := r.Next()
		if err != nil || !ok {
			break // err: unreachable, data was validated
		}
		switch k := key.Raw(data); {
		case jsonscan.KeyIs(k, "supported"):
			if val.Kind == jsonscan.KindArray || val.Kind == jsonscan.KindNull {
				list = val
			}
		case jsonscan.KeyIs(k, "requested"):
			if val.Kind == jsonscan.KindString || val.Kind == jsonscan.KindNull {
				req = val
			}
		}
	}
	if req.Kind == jsonscan.KindString {
		var b strings.Builder
		jsonscan.WriteString(&b, data, req)
		requested = b.String()
	}
	if list.Kind != jsonscan.KindArray {
		return nil, requested
	}
	n := 0
	eachElement(data, list, func(e jsonscan.Span) {
		if e.Kind == jsonscan.KindString || e.Kind == jsonscan.KindNull {
			n++
		}
	})
	if n == 0 {
		return nil, requested
	}
	supported = make([]string, 0, n)
	eachElement(data, list, func(e jsonscan.Span) {
		switch e.Kind {
		case jsonscan.KindNull:
			supported = append(supported, "")
		case jsonscan.KindString:
			var b strings.Builder
			jsonscan.WriteString(&b, data, e)
			supported = append(supported, b.String())
		}
	})
	return supported, requested
}

// eachElement calls fn with each element of the array at list, a span of
// data, which is valid JSON.
func eachElement(data []byte, list jsonscan.Span, fn func(jsonscan.Span)) {
	i := jsonscan.SkipSpace(data, list.Start+1)
	if data[i] == ']' {
		return
	}
	for {
		e, err := jsonscan.SkipNested(data, i)
		if err != nil {
			return // unreachable: data was validated
		}
		fn(e)
		i = jsonscan.SkipSpace(data, e.End)
		if data[i] == ']' {
			return
		}
		i = jsonscan.SkipSpace(data, i+1) // past the comma
	}
}
