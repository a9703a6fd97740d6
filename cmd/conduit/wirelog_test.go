package main

import (
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// TestVerboseWireLog: -v logs every JSON-RPC message on every transport,
// not only HTTP bodies: the server/discover request and its response
// appear for stdio, WebSocket and HTTP targets, and HTTP targets keep
// their status lines.
func TestVerboseWireLog(t *testing.T) {
	for _, tr := range []string{"stdio", "websocket", "http"} {
		t.Run(tr, func(t *testing.T) {
			s := startServer(t, tr, "dual", testserver.Options{})
			r := runConduit(t, "", s.args([]string{"tools", "-v"})...)
			if r.code != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			var sent, received bool
			for _, line := range strings.Split(r.stderr, "\n") {
				switch {
				case strings.Contains(line, "wire: send") && strings.Contains(line, `\"method\":\"server/discover\"`):
					sent = true
				case strings.Contains(line, "wire: recv") && strings.Contains(line, `\"supportedVersions\"`):
					received = true
				}
			}
			if !sent || !received {
				t.Errorf("-v output lacks the server/discover request (%v) or its response (%v):\n%s", sent, received, r.stderr)
			}
			if tr == "http" && !strings.Contains(r.stderr, "wire: ← http response") {
				t.Errorf("-v output lacks the HTTP status lines:\n%s", r.stderr)
			}
		})
	}
}
