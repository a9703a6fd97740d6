package otelconduit

import (
	"context"
	"time"

	"github.com/conduitmcp/conduit/client"
	"go.opentelemetry.io/otel"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/mcpconv"
)

// TrackSession records mcp.client.session.duration for c: from this call
// (make it right after Connect or Dial) until c is done (Close, or a
// failure the client could not heal), with the protocol version and the
// network transport. The returned channel is closed once the duration was
// recorded. Only the meter provider of opts is used.
func TrackSession(c *client.Client, opts ...Option) <-chan struct{} {
	cfg := newConfig(opts)
	dur, err := mcpconv.NewClientSessionDuration(cfg.mp.Meter(ScopeName))
	if err != nil {
		otel.Handle(err)
	}
	start := time.Now()
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		<-c.Done()
		attrs := network(&client.Request{Transport: c.Negotiated().Transport})
		if v := c.Negotiated().Version; v != "" {
			attrs = append(attrs, semconv.McpProtocolVersion(v))
		}
		dur.Record(context.Background(), time.Since(start).Seconds(), attrs...)
	}()
	return recorded
}
