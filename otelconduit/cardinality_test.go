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

// TestErrorCodesAreBoundedMetricDimensions: a server answering each call
// with a JSON-RPC error code of its own choosing does not make a series of
// each: codes outside the range JSON-RPC reserves are error.type _OTHER on
// mcp.client.operation.duration (and have no rpc.response.status_code
// there), while the span keeps the code.
func TestErrorCodesAreBoundedMetricDimensions(t *testing.T) {
	tel := newTelemetry(t)
	srv := conduittest.NewServer(t)
	c, err := client.Connect(t.Context(), srv.Transport(), client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	codes := []int{-32050, -32602}
	for i := range 20 {
		codes = append(codes, 1000+i, -40000-i)
	}
	for _, code := range codes {
		if _, err := c.CallTool(t.Context(), "rpc_error", map[string]any{"code": code}); err == nil {
			t.Fatalf("CallTool(rpc_error, %d) succeeded", code)
		}
	}
	if got := attrsOf(tel.span(t, "tools/call rpc_error").Attributes()); got["error.type"] == "" || got["rpc.response.status_code"] != got["error.type"] {
		t.Errorf("span attributes %v: want the code as error.type and rpc.response.status_code", got)
	}
	types := map[string]string{}
	for _, p := range tel.points(t, "tools/call") {
		types[p["error.type"]] = p["rpc.response.status_code"]
	}
	want := map[string]string{"-32050": "-32050", "-32602": "-32602", "_OTHER": ""}
	if len(types) != len(want) {
		t.Fatalf("tools/call duration points by error.type (with rpc.response.status_code) %v, want %v", types, want)
	}
	for k, v := range want {
		if got, ok := types[k]; !ok || got != v {
			t.Errorf("tools/call duration points by error.type (with rpc.response.status_code) %v, want %v", types, want)
			break
		}
	}
}
