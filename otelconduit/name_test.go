package otelconduit_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/otelconduit"
	"github.com/conduitmcp/conduit/transport"
)

// TestServerChosenSpanNamesBounded: a legacy server's notification with a
// 100 kB method name and its tools/call request with a 100 kB tool name
// (the SDK bounds no span name, whatever its span limits) make spans whose
// names are cut to otelconduit.MaxSpanName bytes, at a character boundary.
func TestServerChosenSpanNamesBounded(t *testing.T) {
	tel := newTelemetry(t)
	pipe, end := transport.NewPipe()
	defer end.Close()
	big := strings.Repeat("é", 50000)
	served := make(chan struct{})
	go func() {
		defer close(served)
		scriptedLegacyServer(t, end, `{"jsonrpc":"2.0","method":"notifications/`+big+`"}`+"\n"+
			`{"jsonrpc":"2.0","id":"r1","method":"tools/call","params":{"name":"`+big+`"}}`)
	}()
	c, err := client.Connect(t.Context(), pipe, client.WithProtocol(client.Legacy),
		client.WithMiddleware(otelconduit.Middleware(tel.options()...)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	select {
	case <-served:
	case <-time.After(10 * time.Second):
		t.Fatal("the client never answered the server's request")
	}
	var names []string
	for _, s := range tel.spans.Ended() {
		if n := s.Name(); strings.HasPrefix(n, "notifications/é") || strings.HasPrefix(n, "tools/call é") {
			names = append(names, n)
			if len(n) > otelconduit.MaxSpanName || !utf8.ValidString(n) {
				t.Errorf("span name of %d bytes (valid UTF-8: %v), want at most %d", len(n), utf8.ValidString(n), otelconduit.MaxSpanName)
			}
		}
	}
	if len(names) != 2 {
		t.Errorf("%d spans of the server's messages, want 2", len(names))
	}
}
