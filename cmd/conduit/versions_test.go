package main

import (
	"testing"

	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// TestOlderVersionServer: the CLI turns the older versions on, so it
// reaches a server that speaks only 2025-03-26 (which the client refuses
// by default).
func TestOlderVersionServer(t *testing.T) {
	for _, tr := range []string{"http", "websocket"} {
		t.Run(tr, func(t *testing.T) {
			s := startServer(t, tr, "legacy", testserver.Options{LegacyVersions: []string{protocol.Version20250326}})
			r := runConduit(t, "", s.args([]string{"call", "--json"}, "add", "a=2", "b:=40")...)
			if r.code != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			var got protocol.CallToolResult
			decodeJSON(t, r, &got)
			if got.Text() != "42" || len(got.StructuredContent) != 0 {
				t.Errorf("result %+v; want text 42 and no structuredContent (2025-03-26 has none)", got)
			}
		})
	}
}
