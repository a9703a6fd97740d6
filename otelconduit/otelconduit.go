// Package otelconduit instruments a Conduit MCP client with OpenTelemetry,
// following the OpenTelemetry semantic conventions for MCP (semconv
// v1.41.0, package go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv), in
// the manner of the go.opentelemetry.io/contrib instrumentations:
//
//	c, err := client.Dial(ctx, url, client.WithMiddleware(otelconduit.Middleware()))
//	otelconduit.TrackSession(c)
//
// [Middleware] makes a span for every MCP request and notification, in
// both eras and on every transport: a client span named
// "{mcp.method.name} {target}" (the target is the tool or prompt name
// where there is one) for what the client sends, a server span for what
// the server asks of the client (legacy sampling, elicitation and roots
// requests; modern MRTR input requests, which become children of the call
// that needed them) and for the server's notifications. It records
// mcp.client.operation.duration for every outgoing request and
// notification, carries the trace context inside params._meta
// (traceparent, tracestate, baggage: HTTP headers would cover only the
// HTTP request, and stdio has none) and takes it from the _meta of the
// server's requests, so that a handler's work joins the server's trace.
// The propagator is the global one (otel.SetTextMapPropagator) once set,
// and W3C trace context and baggage until then, so the two lines above
// propagate as they stand (see [WithPropagators]).
// Replays, retries, re-authorizations and MRTR rounds are span events of
// the request's span; a re-initialization sends initialize again, which
// gets a span of its own. [TrackSession] records
// mcp.client.session.duration.
//
// The core module does not depend on OpenTelemetry: this is a module of
// its own.
package otelconduit

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the tracer and meter.
const ScopeName = "github.com/conduitmcp/conduit/otelconduit"

// Version is this instrumentation's version.
const Version = "0.1.0"

// Option configures [Middleware] and [TrackSession].
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o.apply(&c)
		}
	}
	if c.tp == nil {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil {
		c.mp = otel.GetMeterProvider()
	}
	if c.prop == nil {
		c.prop = globalPropagator{}
	}
	return c
}

// w3c is the propagator used while no global one is set.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// globalPropagator is the global propagator once one is set (it is read
// on every use, so one set after [Middleware] counts), and W3C trace
// context and baggage until then: the global default propagates nothing.
type globalPropagator struct{}

func (globalPropagator) current() propagation.TextMapPropagator {
	if g := otel.GetTextMapPropagator(); len(g.Fields()) > 0 {
		return g
	}
	return w3c
}

func (p globalPropagator) Inject(ctx context.Context, carrier propagation.TextMapCarrier) {
	p.current().Inject(ctx, carrier)
}

func (p globalPropagator) Extract(ctx context.Context, carrier propagation.TextMapCarrier) context.Context {
	return p.current().Extract(ctx, carrier)
}

func (p globalPropagator) Fields() []string { return p.current().Fields() }

// WithTracerProvider sets the tracer provider. Default (and nil): the
// global one (otel.GetTracerProvider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return optionFunc(func(c *config) { c.tp = tp })
}

// WithMeterProvider sets the meter provider. Default (and nil): the global
// one (otel.GetMeterProvider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return optionFunc(func(c *config) { c.mp = mp })
}

// WithPropagators sets the propagators that write the trace context into
// params._meta and read it from there. Default (and nil): the global one
// (otel.GetTextMapPropagator) once a program has set it with
// otel.SetTextMapPropagator, and W3C trace context and baggage
// (propagation.TraceContext and propagation.Baggage) while none is set,
// so that the one-line setup propagates. To propagate nothing, pass
// propagation.NewCompositeTextMapPropagator().
func WithPropagators(p propagation.TextMapPropagator) Option {
	return optionFunc(func(c *config) { c.prop = p })
}
