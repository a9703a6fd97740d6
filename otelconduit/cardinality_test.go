package otelconduit_test

import (
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/otelconduit"
)

// TestSessionIDIsNotAMetricDimension: the session id a legacy HTTP server
// chooses is a span attribute, not a dimension of
// mcp.client.operation.duration: two sessions calling the same tool make
// one series, not one per session id.
func TestSessionIDIsNotAMetricDimension(t *testing.T) {
	tel := newTelemetry(t)
	srv := conduittest.NewServer(t)
	mw := otelconduit.Middleware(tel.options()...)
	for range 2 {
		c, err := client.Dial(t.Context(), srv.URL(), client.WithProtocol(client.Legacy), client.WithMiddleware(mw))
		if err != nil {
			t.Fatalf("Dial: %v", err)
		}
		if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "hi"}); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	if got := attrsOf(tel.span(t, "tools/call echo").Attributes())["mcp.session.id"]; got == "" {
		t.Errorf("the tools/call span has no mcp.session.id")
	}
	pts := tel.points(t, "tools/call")
	if len(pts) != 1 || pts[0]["mcp.session.id"] != "" {
		t.Errorf("tools/call duration points %v, want one without mcp.session.id", pts)
	}
}
