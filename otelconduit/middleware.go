package otelconduit

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
	"go.opentelemetry.io/otel/trace"
)

// ErrorTypeTool is the error.type of a tools/call whose result has
// isError, as the MCP conventions name it.
const ErrorTypeTool = "tool_error"

// AttrFallback is the attribute that marks the server/discover probe of
// an Auto negotiation answered with legacy evidence: the expected way to
// find a legacy server, which then gets initialize. Its value is the
// classifier's reason ("method-not-found", "rpc-error", "status-404",
// "timeout", ...: the Reason constants of package negotiation). Such a
// span keeps an unset status and neither it nor its
// mcp.client.operation.duration point has error.type; the JSON-RPC code,
// if any, is still rpc.response.status_code (of the point only while it is
// in the range JSON-RPC reserves, as for any error: see
// [Middleware]).
const AttrFallback = "conduit.negotiation.fallback"

// AttrInputKey is the attribute of an MRTR input request's span that holds
// its key in inputRequests (an MRTR input request is not a JSON-RPC
// request: its span has no jsonrpc.request.id).
const AttrInputKey = "conduit.input_request.key"

// propagated are the _meta keys the trace context travels in.
var propagated = []string{"traceparent", "tracestate", "baggage"}

type instr struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	opDur  mcpconv.ClientOperationDuration
}

// Middleware returns a client middleware that traces every MCP message
// and records mcp.client.operation.duration (see the package
// documentation). A JSON-RPC error's code is the span's error.type and
// rpc.response.status_code; the duration point has them only for a code
// in the range JSON-RPC reserves (-32768 to -32000), and error.type
// _OTHER for any other, so that the codes a server makes up do not make a
// series each. The session id is an attribute of the span only. Give it
// first to [client.WithMiddleware] so that its
// spans cover the other middlewares.
func Middleware(opts ...Option) client.Middleware {
	cfg := newConfig(opts)
	in := &instr{
		tracer: cfg.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(Version), trace.WithSchemaURL(semconv.SchemaURL)),
		prop:   cfg.prop,
	}
	meter := cfg.mp.Meter(ScopeName)
	var err error
	if in.opDur, err = mcpconv.NewClientOperationDuration(meter); err != nil {
		otel.Handle(err)
	}
	return func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			if req.Incoming {
				return in.incoming(ctx, req, next)
			}
			return in.outgoing(ctx, req, next)
		}
	}
}

func (in *instr) outgoing(ctx context.Context, req *client.Request, next client.Invoker) (json.RawMessage, error) {
	start := time.Now()
	target, attrs := describe(req)
	ctx, span := in.tracer.Start(ctx, spanName(req.Method, target), trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...), trace.WithAttributes(spanOnly(req)...))
	defer span.End()
	in.inject(ctx, req)
	prev := req.OnAttempt
	req.OnAttempt = func(why string, id jsonrpc.ID) {
		span.AddEvent(why, trace.WithAttributes(semconv.JSONRPCRequestIDKey.String(idText(id))))
		if prev != nil {
			prev(why, id)
		}
	}
	raw, err := next(ctx, req)
	if req.ID.IsValid() {
		span.SetAttributes(semconv.JSONRPCRequestIDKey.String(idText(req.ID)))
	}
	var end []attribute.KeyValue
	if reason, ok := fellBack(req, err); ok {
		end = fallback(span, reason, err)
	} else {
		end = outcome(span, req.Method, raw, err)
	}
	in.opDur.Record(context.WithoutCancel(ctx), time.Since(start).Seconds(), mcpconv.MethodNameAttr(req.Method), append(attrs, end...)...)
	return raw, err
}

func (in *instr) incoming(ctx context.Context, req *client.Request, next client.Invoker) (json.RawMessage, error) {
	ctx = in.prop.Extract(ctx, metaCarrier(req))
	target, attrs := describe(req)
	ctx, span := in.tracer.Start(ctx, spanName(req.Method, target), trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...), trace.WithAttributes(spanOnly(req)...))
	defer span.End()
	if req.ID.IsValid() {
		span.SetAttributes(semconv.JSONRPCRequestIDKey.String(idText(req.ID)))
	}
	if req.InputKey != "" {
		span.SetAttributes(attribute.String(AttrInputKey, cut(req.InputKey, MaxAttributeValue)))
	}
	raw, err := next(ctx, req)
	outcome(span, req.Method, raw, err)
	return raw, err
}

// inject writes the trace context of ctx into req's params._meta.
func (in *instr) inject(ctx context.Context, req *client.Request) {
	carrier := propagation.MapCarrier{}
	in.prop.Inject(ctx, carrier)
	for _, k := range carrier.Keys() {
		if err := req.SetMeta(k, carrier.Get(k)); err != nil {
			otel.Handle(err)
			return
		}
	}
}

// metaCarrier reads the propagated keys of req's params._meta.
func metaCarrier(req *client.Request) propagation.MapCarrier {
	carrier := propagation.MapCarrier{}
	for _, k := range propagated {
		raw, ok := req.Meta(k)
		if !ok {
			continue
		}
		var v string
		if json.Unmarshal(raw, &v) == nil && v != "" {
			carrier.Set(k, v)
		}
	}
	return carrier
}

// spanName is "{method} {target}", cut to [MaxSpanName] bytes.
func spanName(method, target string) string {
	if target == "" {
		return cut(method, MaxSpanName)
	}
	return cut(method+" "+cut(target, MaxSpanName), MaxSpanName)
}

// spanOnly returns the attributes of req's span that are no dimension of
// mcp.client.operation.duration: the session id, which the server chooses
// anew for every session, would make a series of each.
func spanOnly(req *client.Request) []attribute.KeyValue {
	if req.SessionID == "" {
		return nil
	}
	return []attribute.KeyValue{semconv.McpSessionID(req.SessionID)}
}

// describe returns the span's target and the attributes known before the
// message is sent or served that are also dimensions of
// mcp.client.operation.duration (see [spanOnly] for the others).
func describe(req *client.Request) (string, []attribute.KeyValue) {
	attrs := make([]attribute.KeyValue, 0, 10)
	attrs = append(attrs, semconv.McpMethodNameKey.String(req.Method))
	if req.ProtocolVersion != "" {
		attrs = append(attrs, semconv.McpProtocolVersion(req.ProtocolVersion))
	}
	var p struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	}
	if len(req.Params) > 0 {
		_ = json.Unmarshal(req.Params, &p) // params that are not an object: no target
	}
	target := ""
	switch req.Method {
	case protocol.MethodToolsCall:
		target = p.Name
		attrs = append(attrs, semconv.GenAIToolName(cut(p.Name, MaxAttributeValue)), semconv.GenAIOperationNameExecuteTool)
	case protocol.MethodPromptsGet:
		target = p.Name
		attrs = append(attrs, semconv.GenAIPromptName(cut(p.Name, MaxAttributeValue)))
	}
	if p.URI != "" {
		attrs = append(attrs, semconv.McpResourceURI(cut(p.URI, MaxAttributeValue)))
	}
	return target, append(attrs, network(req)...)
}

// network returns network.transport, network.protocol.name and
// server.address/port.
func network(req *client.Request) []attribute.KeyValue {
	var attrs []attribute.KeyValue
	switch req.Transport {
	case "stdio", "memory":
		attrs = append(attrs, semconv.NetworkTransportPipe)
	case "http", "sse":
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("http"))
	case "websocket":
		attrs = append(attrs, semconv.NetworkTransportTCP, semconv.NetworkProtocolName("websocket"))
	}
	if req.ServerAddress == "" {
		return attrs
	}
	u, err := url.Parse(req.ServerAddress)
	if err != nil || u.Hostname() == "" {
		return attrs
	}
	attrs = append(attrs, semconv.ServerAddress(u.Hostname()))
	port := u.Port()
	if port == "" {
		switch u.Scheme {
		case "https", "wss":
			port = "443"
		case "http", "ws":
			port = "80"
		}
	}
	if n, err := strconv.Atoi(port); err == nil {
		attrs = append(attrs, semconv.ServerPort(n))
	}
	return attrs
}

// outcome sets the span's status from the result or the error and returns
// the attributes the duration metric adds for it.
func outcome(span trace.Span, method string, raw json.RawMessage, err error) []attribute.KeyValue {
	if err != nil {
		var attrs []attribute.KeyValue
		if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
			code := strconv.FormatInt(je.Code, 10)
			span.SetAttributes(semconv.ErrorTypeKey.String(code), semconv.RPCResponseStatusCode(code))
			attrs = codeDimensions(je.Code, true)
		} else if ce, ok := errors.AsType[*client.Error](err); ok {
			attrs = append(attrs, semconv.ErrorTypeKey.String(ce.Kind.String()))
			span.SetAttributes(attrs...)
		} else {
			attrs = append(attrs, semconv.ErrorType(err))
			span.SetAttributes(attrs...)
		}
		recordError(span, err)
		setError(span, err.Error())
		return attrs
	}
	if method == protocol.MethodToolsCall && len(raw) > 0 {
		var res protocol.CallToolResult
		if json.Unmarshal(raw, &res) == nil && res.IsError != nil && *res.IsError {
			attrs := []attribute.KeyValue{semconv.ErrorTypeKey.String(ErrorTypeTool)}
			span.SetAttributes(attrs...)
			setError(span, res.Text())
			return attrs
		}
	}
	return nil
}

// fellBack reports whether err, what next returned for req, is the legacy
// evidence an Auto negotiation's probe falls back on, and the reason.
func fellBack(req *client.Request, err error) (string, bool) {
	if !req.Fallback || err == nil {
		return "", false
	}
	var o negotiation.Outcome
	if he, ok := errors.AsType[*transport.HTTPError](err); ok {
		o = negotiation.Outcome{Kind: negotiation.OutcomeHTTP, Status: he.StatusCode, ContentType: he.ContentType, Body: he.Body, Response: he.Response}
	} else if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		o = negotiation.Outcome{Kind: negotiation.OutcomeRPCError, Error: je}
	} else if errors.Is(err, context.DeadlineExceeded) {
		o = negotiation.Outcome{Kind: negotiation.OutcomeTimeout, Err: err}
	} else {
		return "", false
	}
	class := negotiation.TransportHTTP
	if req.Transport == "stdio" {
		class = negotiation.TransportStdio
	}
	v := negotiation.ClassifyProbe(negotiation.ProbeContext{FallbackAvailable: true, Transport: class}, o)
	return v.Reason, v.Kind == negotiation.VerdictLegacy
}

// fallback marks span as a probe answered with legacy evidence (see
// [AttrFallback]) and returns the attributes the duration metric adds.
func fallback(span trace.Span, reason string, err error) []attribute.KeyValue {
	attrs := []attribute.KeyValue{attribute.String(AttrFallback, reason)}
	span.SetAttributes(attrs...)
	if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
		span.SetAttributes(semconv.RPCResponseStatusCode(strconv.FormatInt(je.Code, 10)))
		attrs = append(attrs, codeDimensions(je.Code, false)...)
	}
	span.AddEvent("legacy fallback", trace.WithAttributes(attribute.String(AttrFallback, reason)))
	return attrs
}

// codeDimensions returns the attributes of mcp.client.operation.duration
// for a JSON-RPC error code the server chose: rpc.response.status_code
// (and error.type, with failed) while the code is in the range JSON-RPC
// reserves (-32768 to -32000: its own codes, MCP's and the
// implementation-defined server errors), and only error.type _OTHER
// (with failed) for any other code, so that a server answering each call
// with a new code does not make a series of each. The span has the code
// as it is.
func codeDimensions(code int64, failed bool) []attribute.KeyValue {
	if code < -32768 || code > -32000 {
		if !failed {
			return nil
		}
		return []attribute.KeyValue{semconv.ErrorTypeOther}
	}
	c := strconv.FormatInt(code, 10)
	if !failed {
		return []attribute.KeyValue{semconv.RPCResponseStatusCode(c)}
	}
	return []attribute.KeyValue{semconv.ErrorTypeKey.String(c), semconv.RPCResponseStatusCode(c)}
}

// idText is a JSON-RPC id as the jsonrpc.request.id attribute has it: the
// number or the string, unquoted, cut to [MaxAttributeValue].
func idText(id jsonrpc.ID) string {
	if s, ok := id.Str(); ok {
		return cut(s, MaxAttributeValue)
	}
	return cut(id.String(), MaxAttributeValue)
}

// recordError is span.RecordError with the message cut to
// [MaxAttributeValue]: the SDK's would be the error's text whole, which
// may quote what the server sent.
func recordError(span trace.Span, err error) {
	span.AddEvent(semconv.ExceptionEventName, trace.WithAttributes(
		semconv.ExceptionType(errorType(err)),
		semconv.ExceptionMessage(cut(err.Error(), MaxAttributeValue)),
	))
}

// errorType is the exception.type of err, as the SDK's RecordError names
// it: the package path and name of its type, or the type as Go prints it
// for an unnamed one (a pointer).
func errorType(err error) string {
	t := reflect.TypeOf(err)
	if t.PkgPath() == "" && t.Name() == "" {
		return t.String()
	}
	return t.PkgPath() + "." + t.Name()
}

// MaxAttributeValue bounds, in bytes, the value of an attribute a server
// chooses or echoes: a span's tool, prompt and resource names, the
// JSON-RPC id of a request the server sends, the input key, and the
// message of the exception event. The SDK's span limits bound no
// attribute by default, and a span of megabytes makes an exporter refuse
// the whole batch it is in.
const MaxAttributeValue = 1024

// MaxStatusDescription bounds the status description of a span, in bytes:
// the error's text, or a failed tool call's, which a server chooses. The
// SDK's span limits bound attributes but no status description.
const MaxStatusDescription = 1024

// setError sets span's status to Error with desc, cut to
// [MaxStatusDescription] bytes.
func setError(span trace.Span, desc string) {
	span.SetStatus(codes.Error, cut(desc, MaxStatusDescription))
}

// cut returns s, or its first limit bytes at most, cut at a character
// boundary and ending in an ellipsis, when it is longer.
func cut(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const ellipsis = "…"
	n := limit - len(ellipsis)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + ellipsis
}

// MaxSpanName bounds the name of a span, in bytes: its method and tool or
// prompt name, which a server chooses for what it sends. The SDK's span
// limits bound no span name.
const MaxSpanName = 256
