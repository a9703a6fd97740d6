package otelconduit_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/otelconduit"
)

// points returns the mcp.client.operation.duration points of method.
func (tel *telemetry) points(t *testing.T, method string) []map[string]string {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || m.Name != "mcp.client.operation.duration" {
				continue
			}
			for _, p := range h.DataPoints {
				if a := attrsOf(p.Attributes.ToSlice()); a["mcp.method.name"] == method {
					out = append(out, a)
				}
			}
		}
	}
	return out
}

// TestLegacyFallbackIsNotAnError: an Auto connect to a legacy server
// probes with server/discover and gets the expected -32601 (or its HTTP
// form); the probe's span is marked as the fallback it is, not as an
// error, and its duration point has no error.type. A Modern client's
// probe cannot fall back: there the same answer is an error.
func TestLegacyFallbackIsNotAnError(t *testing.T) {
	for _, cn := range connectors {
		t.Run(cn.name, func(t *testing.T) {
			tel := newTelemetry(t)
			srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy))
			c, err := cn.dial(t, srv, client.WithProtocol(client.Auto), client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
			if err != nil {
				t.Fatalf("connecting: %v", err)
			}
			defer c.Close()
			probe := tel.span(t, "server/discover")
			got := attrsOf(probe.Attributes())
			if probe.Status().Code == codes.Error || got["error.type"] != "" || got[otelconduit.AttrFallback] == "" {
				t.Errorf("probe span status %v, attributes %v: want no error, %s set", probe.Status(), got, otelconduit.AttrFallback)
			}
			if evs := probe.Events(); len(evs) != 1 || evs[0].Name != "legacy fallback" {
				t.Errorf("probe span events %v, want one legacy fallback", evs)
			}
			pts := tel.points(t, "server/discover")
			if len(pts) != 1 || pts[0]["error.type"] != "" || pts[0][otelconduit.AttrFallback] != got[otelconduit.AttrFallback] {
				t.Errorf("server/discover duration points %v, want one without error.type, marked %s", pts, otelconduit.AttrFallback)
			}
		})
	}
	t.Run("modern-only", func(t *testing.T) {
		tel := newTelemetry(t)
		srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy))
		if c, err := client.Connect(t.Context(), srv.Transport(), client.WithProtocol(client.Modern), client.WithMiddleware(otelconduit.Middleware(tel.options()...))); err == nil {
			c.Close()
			t.Fatal("a Modern client connected to a legacy server")
		}
		probe := tel.span(t, "server/discover")
		if got := attrsOf(probe.Attributes()); probe.Status().Code != codes.Error || got["error.type"] != "-32601" || got[otelconduit.AttrFallback] != "" {
			t.Errorf("probe span status %v, attributes %v: want an error -32601", probe.Status(), got)
		}
	})
}
