package host_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/host"
)

// stormServer is a legacy-era Streamable HTTP server with one tool that
// sends notifications/tools/list_changed in every answer to tools/list
// (an event stream: the notification, then the result), as a server
// might that announces a change whenever its registry is read. Each
// listing asks for the next. It counts the listings.
func stormServer(t *testing.T, lists *atomic.Int64) string {
	t.Helper()
	return newHTTPTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || json.Unmarshal(body, &req) != nil {
			http.Error(w, "no", http.StatusMethodNotAllowed)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		answer := func(member, v string) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,%q:%s}`, req.ID, member, v)
		}
		switch req.Method {
		case "initialize":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer("result", `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"storm","version":"1"}}`))
		case "tools/list":
			lists.Add(1)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
			io.WriteString(w, "data: "+answer("result", `{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)+"\n\n")
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, answer("error", `{"code":-32601,"message":"no"}`))
		}
	}))
}

// TestListChangedStorm: a server that announces a change of its tools in
// every answer to tools/list is listed again at a bounded pace, not in a
// loop as fast as it answers (each refresh also rebuilds the whole
// catalogue of every server); its tools stay in the catalogue.
func TestListChangedStorm(t *testing.T) {
	var lists atomic.Int64
	url := stormServer(t, &lists) + "/mcp"
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{"storm": map[string]any{"url": url}}})
	opts := fast(5 * time.Second)
	opts.Server = func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{Protocol: client.Legacy, ConnectTimeout: 5 * time.Second}
	}
	h := startHost(t, p, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	before := lists.Load()
	time.Sleep(2 * time.Second)
	if n := lists.Load() - before; n > 40 {
		t.Errorf("tools/list sent %d times in 2s by a host refreshing on the server's list_changed, want at most 40", n)
	}
	if _, ok := h.Tool("storm__echo"); !ok {
		t.Errorf("storm__echo not in the catalogue: %v", toolNames(h))
	}
}
