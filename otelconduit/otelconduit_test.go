package otelconduit_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/otelconduit"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

func TestMain(m *testing.M) {
	conduittest.ServeIfSpawned()
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}

// telemetry is an in-memory tracer and meter provider.
type telemetry struct {
	spans  *tracetest.SpanRecorder
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t *testing.T) *telemetry {
	tel := &telemetry{spans: tracetest.NewSpanRecorder(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(tel.spans))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

func (tel *telemetry) options() []otelconduit.Option {
	return []otelconduit.Option{
		otelconduit.WithTracerProvider(tel.tp),
		otelconduit.WithMeterProvider(tel.mp),
		otelconduit.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
	}
}

// span returns the ended span named name.
func (tel *telemetry) span(t *testing.T, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var names []string
	for _, s := range tel.spans.Ended() {
		if s.Name() == name {
			return s
		}
		names = append(names, s.Name())
	}
	t.Fatalf("no span %q; spans: %q", name, names)
	return nil
}

func attrsOf(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

func wantAttrs(t *testing.T, s sdktrace.ReadOnlySpan, want map[string]string) {
	t.Helper()
	got := attrsOf(s.Attributes())
	for k, v := range want {
		if got[k] != v {
			t.Errorf("span %q: %s = %q, want %q (attributes %v)", s.Name(), k, got[k], v, got)
		}
	}
}

var sampler = handler.Funcs{
	CreateMessage: func(ctx context.Context, _ *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return protocol.TextMessageResult("m", "Paris"), nil
	},
}

type connector struct {
	name string
	dial func(t *testing.T, srv *conduittest.Server, opts ...client.Option) (*client.Client, error)
}

var connectors = []connector{
	{"memory", func(t *testing.T, srv *conduittest.Server, opts ...client.Option) (*client.Client, error) {
		return client.Connect(t.Context(), srv.Transport(), opts...)
	}},
	{"stdio", func(t *testing.T, srv *conduittest.Server, opts ...client.Option) (*client.Client, error) {
		return client.Connect(t.Context(), srv.Command(t), opts...)
	}},
	{"http", func(t *testing.T, srv *conduittest.Server, opts ...client.Option) (*client.Client, error) {
		return client.Dial(t.Context(), srv.URL(), opts...)
	}},
	{"websocket", func(t *testing.T, srv *conduittest.Server, opts ...client.Option) (*client.Client, error) {
		return client.Dial(t.Context(), srv.WebSocketURL(), opts...)
	}},
}

// TestSpansMetricsAndMeta calls tools against a real server in both eras
// on every transport and checks the spans (names, kinds, attributes,
// status, parents), the metrics and the trace context the server received
// in params._meta.
func TestSpansMetricsAndMeta(t *testing.T) {
	for _, era := range []client.Protocol{client.Modern, client.Legacy} {
		for _, cn := range connectors {
			t.Run(string(era)+"/"+cn.name, func(t *testing.T) {
				tel := newTelemetry(t)
				srv := conduittest.NewServer(t)
				c, err := cn.dial(t, srv, client.WithProtocol(era), client.WithHandler(sampler),
					client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
				if err != nil {
					t.Fatalf("connecting: %v", err)
				}
				session := otelconduit.TrackSession(c, otelconduit.WithMeterProvider(tel.mp))
				checkCalls(t, tel, srv, c, cn.name)
				if err := c.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				select {
				case <-session:
				case <-time.After(5 * time.Second):
					t.Fatal("the session duration was never recorded")
				}
				checkMetrics(t, tel, c)
			})
		}
	}
}

func checkCalls(t *testing.T, tel *telemetry, srv *conduittest.Server, c *client.Client, kind string) {
	t.Helper()
	member, _ := baggage.NewMember("tenant", "acme")
	bag, _ := baggage.New(member)
	ctx, parent := tel.tp.Tracer("test").Start(baggage.ContextWithBaggage(t.Context(), bag), "agent step")
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if res, err := c.CallTool(ctx, "fail", map[string]any{"message": "boom"}); err != nil || !res.Failed() {
		t.Fatalf("CallTool(fail) = %v, %v; want a tool error", res, err)
	}
	if _, err := c.CallTool(ctx, "rpc_error", map[string]any{"code": -32050}); err == nil {
		t.Fatal("CallTool(rpc_error) succeeded")
	}
	if _, err := c.CallTool(ctx, "sample", map[string]any{}); err != nil {
		t.Fatalf("CallTool(sample): %v", err)
	}
	if err := c.Notify(ctx, "notifications/vendor/note", map[string]any{"n": 1}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	parent.End()

	echo := tel.span(t, "tools/call echo")
	if echo.SpanKind() != trace.SpanKindClient || echo.Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Errorf("tools/call echo: kind %v, parent %v; want a client span under the caller's", echo.SpanKind(), echo.Parent().SpanID())
	}
	transportAttr := map[string]string{"memory": "pipe", "stdio": "pipe", "http": "tcp", "websocket": "tcp"}[kind]
	wantAttrs(t, echo, map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "echo", "gen_ai.operation.name": "execute_tool",
		"mcp.protocol.version": c.Negotiated().Version, "network.transport": transportAttr,
	})
	if got := attrsOf(echo.Attributes()); got["jsonrpc.request.id"] == "" || (kind == "http" || kind == "websocket") != (got["server.address"] == "127.0.0.1") {
		t.Errorf("tools/call echo attributes %v: want jsonrpc.request.id, and server.address on the network transports", got)
	}
	if echo.Status().Code == codes.Error {
		t.Errorf("tools/call echo status %v", echo.Status())
	}
	// The trace context the server received in params._meta.
	msg, err := srv.WaitReceived(t.Context(), protocol.MethodToolsCall)
	if err != nil {
		t.Fatal(err)
	}
	var tp string
	_ = json.Unmarshal(msg.Meta("traceparent"), &tp)
	sc := echo.SpanContext()
	if want := "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-01"; tp != want {
		t.Errorf("the server received traceparent %q, want %q (params %s)", tp, want, msg.Params)
	}

	if got := attrsOf(echo.Attributes())["mcp.session.id"]; (kind == "http" && c.Negotiated().Era.String() == "legacy") != (got != "") {
		t.Errorf("mcp.session.id %q on %s in the %s era", got, kind, c.Negotiated().Era)
	}
	var bg string
	_ = json.Unmarshal(msg.Meta("baggage"), &bg)
	if bg != "tenant=acme" {
		t.Errorf("the server received baggage %q, want tenant=acme", bg)
	}
	note, err := srv.WaitReceived(t.Context(), "notifications/vendor/note")
	if err != nil {
		t.Fatal(err)
	}
	ns := tel.span(t, "notifications/vendor/note")
	_ = json.Unmarshal(note.Meta("traceparent"), &tp)
	if ns.SpanKind() != trace.SpanKindClient || !strings.Contains(tp, ns.SpanContext().SpanID().String()) {
		t.Errorf("notification span kind %v, the server received traceparent %q (span %s)", ns.SpanKind(), tp, ns.SpanContext().SpanID())
	}

	fail := tel.span(t, "tools/call fail")
	wantAttrs(t, fail, map[string]string{"error.type": otelconduit.ErrorTypeTool})
	if fail.Status().Code != codes.Error || !strings.Contains(fail.Status().Description, "boom") {
		t.Errorf("tools/call fail status %v, want an error saying boom", fail.Status())
	}
	rpc := tel.span(t, "tools/call rpc_error")
	wantAttrs(t, rpc, map[string]string{"error.type": "-32050", "rpc.response.status_code": "-32050"})
	if rpc.Status().Code != codes.Error {
		t.Errorf("tools/call rpc_error status %v", rpc.Status())
	}
	in := tel.span(t, "sampling/createMessage")
	sample := tel.span(t, "tools/call sample")
	if in.SpanKind() != trace.SpanKindServer {
		t.Errorf("sampling/createMessage kind %v, want server", in.SpanKind())
	}
	if c.Negotiated().Era.String() == "modern" && in.Parent().SpanID() != sample.SpanContext().SpanID() {
		t.Errorf("the MRTR input request's span is not a child of tools/call sample")
	}
	// An MRTR input key is not a JSON-RPC id; a legacy server request's id is.
	inAttrs := attrsOf(in.Attributes())
	if modern := c.Negotiated().Era.String() == "modern"; modern != (inAttrs["jsonrpc.request.id"] == "") || modern != (inAttrs[otelconduit.AttrInputKey] != "") {
		t.Errorf("sampling/createMessage attributes %v in the %s era: want %s on an MRTR input request, jsonrpc.request.id on a legacy one",
			inAttrs, c.Negotiated().Era, otelconduit.AttrInputKey)
	}
	if c.Negotiated().Era.String() == "modern" {
		if evs := sample.Events(); len(evs) != 1 || evs[0].Name != "input-round" {
			t.Errorf("tools/call sample events %v, want one input-round", evs)
		}
	}
}

func checkMetrics(t *testing.T, tel *telemetry, c *client.Client) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := tel.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	points := map[string][]metricdata.HistogramDataPoint[float64]{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok {
				points[m.Name] = append(points[m.Name], h.DataPoints...)
			}
		}
	}
	var echo, failed bool
	for _, p := range points["mcp.client.operation.duration"] {
		a := attrsOf(p.Attributes.ToSlice())
		if a["mcp.method.name"] == "tools/call" && a["gen_ai.tool.name"] == "echo" && p.Count == 1 && a["error.type"] == "" {
			echo = true
		}
		if a["gen_ai.tool.name"] == "rpc_error" && a["error.type"] == "-32050" {
			failed = true
		}
	}
	if !echo || !failed {
		t.Errorf("mcp.client.operation.duration points %v: want tools/call echo once, and rpc_error with error.type", points["mcp.client.operation.duration"])
	}
	sess := points["mcp.client.session.duration"]
	if len(sess) != 1 || sess[0].Count != 1 || attrsOf(sess[0].Attributes.ToSlice())["mcp.protocol.version"] != c.Negotiated().Version {
		t.Errorf("mcp.client.session.duration points %v, want one with the protocol version", sess)
	}
}

// TestExtractsServerTraceContext: a legacy server's request carrying
// traceparent in params._meta reaches the handler in the server's trace.
func TestExtractsServerTraceContext(t *testing.T) {
	tel := newTelemetry(t)
	pipe, end := transport.NewPipe()
	defer end.Close()
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	served := make(chan struct{})
	go func() {
		defer close(served)
		scriptedLegacyServer(t, end, `{"jsonrpc":"2.0","id":"r1","method":"roots/list","params":{"_meta":{"traceparent":"00-`+traceID+`-`+spanID+`-01"}}}`)
	}()
	got := make(chan trace.SpanContext, 1)
	h := handler.Funcs{ListRoots: func(ctx context.Context) ([]protocol.Root, error) {
		got <- trace.SpanContextFromContext(ctx)
		return []protocol.Root{{URI: "file:///w"}}, nil
	}}
	c, err := client.Connect(t.Context(), pipe, client.WithProtocol(client.Legacy), client.WithHandler(h),
		client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var sc trace.SpanContext
	select {
	case sc = <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the handler was never called")
	}
	<-served
	if sc.TraceID().String() != traceID {
		t.Errorf("the handler ran in trace %s, want the server's %s", sc.TraceID(), traceID)
	}
	s := tel.span(t, "roots/list")
	if s.Parent().SpanID().String() != spanID || !s.Parent().IsRemote() || s.SpanKind() != trace.SpanKindServer {
		t.Errorf("roots/list span: parent %v (remote %v), kind %v; want a server span under the server's", s.Parent().SpanID(), s.Parent().IsRemote(), s.SpanKind())
	}
	wantAttrs(t, s, map[string]string{"mcp.method.name": "roots/list", "jsonrpc.request.id": "r1", "network.transport": "pipe"})
}

// TestRetryIsASpanEvent: a tools/call answered HTTP 503 once is retried;
// the retry is an event of the call's span, which ends well.
func TestRetryIsASpanEvent(t *testing.T) {
	tel := newTelemetry(t)
	srv := conduittest.NewServer(t, conduittest.WithFaults(conduittest.Fault("http-status:status=503").On("tools/call").Times(1)))
	c, err := client.Dial(t.Context(), srv.URL(), client.WithProtocol(client.Modern),
		client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	s := tel.span(t, "tools/call echo")
	evs := s.Events()
	if len(evs) != 1 || evs[0].Name != "retry" || attrsOf(evs[0].Attributes)["jsonrpc.request.id"] == "" {
		t.Errorf("tools/call echo events %v, want one retry naming the attempt's id", evs)
	}
	if s.Status().Code == codes.Error {
		t.Errorf("status %v after a successful retry", s.Status())
	}
}

// TestOneLineSetupPropagates: without WithPropagators and with no global
// propagator set (this test binary sets none), the middleware still sends
// the W3C trace context; an explicitly empty propagator sends none.
func TestOneLineSetupPropagates(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []otelconduit.Option
		want bool
	}{
		{"default", nil, true},
		{"empty", []otelconduit.Option{otelconduit.WithPropagators(propagation.NewCompositeTextMapPropagator())}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			srv := conduittest.NewServer(t)
			opts := append([]otelconduit.Option{otelconduit.WithTracerProvider(tel.tp)}, tc.opts...)
			c, err := client.Connect(t.Context(), srv.Transport(), client.WithMiddleware(otelconduit.Middleware(opts...)))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := c.CallTool(t.Context(), "echo", map[string]any{"text": "hi"}); err != nil {
				t.Fatal(err)
			}
			msg, err := srv.WaitReceived(t.Context(), "tools/call")
			if err != nil {
				t.Fatal(err)
			}
			var tp string
			_ = json.Unmarshal(msg.Meta("traceparent"), &tp)
			sc := tel.span(t, "tools/call echo").SpanContext()
			if got := strings.Contains(tp, sc.SpanID().String()); got != tc.want {
				t.Errorf("the server received traceparent %q (span %s); want it sent: %v", tp, sc.SpanID(), tc.want)
			}
		})
	}
}
