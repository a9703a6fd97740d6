package otelconduit_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/otelconduit"
)

// TestServerStringsInAttributesBounded: strings a server chooses or
// echoes (a tool or resource name of 1 MiB, and the JSON-RPC error whose
// message quotes it) reach the span's attributes, its exception event and
// the duration metric's dimensions cut to otelconduit.MaxAttributeValue
// bytes, at a character boundary. The SDK's span limits do not bound
// attributes by default, and one span that large makes an exporter refuse
// the whole batch it is in.
func TestServerStringsInAttributesBounded(t *testing.T) {
	tel := newTelemetry(t)
	srv := conduittest.NewServer(t)
	c, err := client.Connect(t.Context(), srv.Transport(), client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	huge := "é" + strings.Repeat("x", 1<<20)
	if _, err := c.CallTool(t.Context(), huge, nil); err == nil {
		t.Fatal("CallTool of an unknown tool succeeded")
	}
	if _, err := c.ReadResource(t.Context(), "test://"+huge); err == nil {
		t.Fatal("ReadResource of an unknown resource succeeded")
	}
	check := func(where string, kvs []attribute.KeyValue) {
		t.Helper()
		for _, kv := range kvs {
			if v := kv.Value.String(); len(v) > otelconduit.MaxAttributeValue || !utf8.ValidString(v) {
				t.Errorf("%s: attribute %s of %d bytes (valid UTF-8: %v), want at most %d", where, kv.Key, len(v), utf8.ValidString(v), otelconduit.MaxAttributeValue)
			}
		}
	}
	spans := 0
	for _, s := range tel.spans.Ended() {
		if !strings.HasPrefix(s.Name(), "tools/call") && !strings.HasPrefix(s.Name(), "resources/read") {
			continue
		}
		spans++
		check(s.Name()+" span", s.Attributes())
		for _, ev := range s.Events() {
			check(s.Name()+" event "+ev.Name, ev.Attributes)
		}
		if len(s.Events()) == 0 {
			t.Errorf("%s: no exception event", s.Name())
		}
	}
	if spans != 2 {
		t.Errorf("%d spans of the two calls, want 2", spans)
	}
	for _, m := range []string{"tools/call", "resources/read"} {
		for _, p := range tel.points(t, m) {
			for k, v := range p {
				if len(v) > otelconduit.MaxAttributeValue {
					t.Errorf("%s metric: dimension %s of %d bytes, want at most %d", m, k, len(v), otelconduit.MaxAttributeValue)
				}
			}
		}
	}
}
