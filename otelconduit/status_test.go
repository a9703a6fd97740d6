package otelconduit_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/codes"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/otelconduit"
)

// TestStatusDescriptionBounded: a tool error's text of 256 KiB (the SDK
// bounds no status description, whatever its span limits) does not become
// the span's status description whole: it is cut to
// otelconduit.MaxStatusDescription bytes, at a character boundary.
func TestStatusDescriptionBounded(t *testing.T) {
	tel := newTelemetry(t)
	srv := conduittest.NewServer(t)
	c, err := client.Connect(t.Context(), srv.Transport(), client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	msg := "boom " + strings.Repeat("é", 128<<10)
	if res, err := c.CallTool(t.Context(), "fail", map[string]any{"message": msg}); err != nil || !res.Failed() {
		t.Fatalf("CallTool(fail) = %v, %v; want a tool error", res, err)
	}
	st := tel.span(t, "tools/call fail").Status()
	if st.Code != codes.Error || !strings.HasPrefix(st.Description, "boom é") || len(st.Description) > otelconduit.MaxStatusDescription || !utf8.ValidString(st.Description) {
		t.Errorf("status %v, description of %d bytes (valid UTF-8: %v); want an error saying boom in at most %d bytes",
			st.Code, len(st.Description), utf8.ValidString(st.Description), otelconduit.MaxStatusDescription)
	}
}
