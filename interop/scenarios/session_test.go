package scenarios

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// TestSessionRenegotiation404 mirrors session-renegotiation-404
// (src/scenarios/client/session-renegotiation.ts): the server assigns
// session A, answers the next session-bearing request 404, and expects a
// new initialize without a session id (session B) and the client to go on
// working.
func TestSessionRenegotiation404(t *testing.T) {
	var mu sync.Mutex
	var terminated, reinitClean, reinitStale, continued bool
	inits := 0
	mk := newMock(t, func(w http.ResponseWriter, r *http.Request, m recorded) {
		mu.Lock()
		defer mu.Unlock()
		if m.Method == "initialize" {
			inits++
			session := "session-A"
			if inits > 1 {
				session = "session-B"
				if terminated {
					reinitStale = reinitStale || m.Session != ""
					reinitClean = reinitClean || m.Session == ""
				}
			}
			w.Header().Set("Mcp-Session-Id", session)
			reply(w, m.ID, map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "session-renegotiation-404-server", "version": "1.0.0"}})
			return
		}
		if !terminated {
			terminated = true
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32001,"message":"Session not found"}}`))
			return
		}
		continued = true
		w.Header().Set("Mcp-Session-Id", "session-B")
		result := map[string]any{}
		if m.Method == protocol.MethodToolsList {
			result["tools"] = []any{}
		}
		reply(w, m.ID, result)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, mk.srv.URL, client.WithProtocol(client.Pin(protocol.Version20251125)))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	for _, err := range c.Tools(ctx) {
		if err != nil {
			t.Errorf("Tools after the session was lost: %v", err)
		}
	}
	if err := c.Ping(ctx); err != nil {
		t.Errorf("Ping under the new session: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	check(t, "client-session-renegotiate-on-404", terminated && reinitClean && !reinitStale,
		"terminated %v, re-initialized without a session id %v, with the stale one %v", terminated, reinitClean, reinitStale)
	check(t, "client-session-continues-after-renegotiation", continued, "no request under the new session")
}
