package scenarios

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// The fixtures of src/scenarios/legacy-extensions.ts.
const (
	clientExtensions = `{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]},"com.example/conformance":{"nested":{"enabled":false,"limit":0},"values":["a",2,null]},"com.example/empty":{}}`
	serverExtensions = `{"io.modelcontextprotocol/ui":{},"com.example/conformance":{"nested":{"enabled":true,"limit":3},"values":[null,"b",4]},"com.example/empty":{}}`
	echoTool         = "test_legacy_extension_capabilities"
)

// TestLegacyExtensions mirrors legacy-extensions
// (src/scenarios/client/legacy-extensions.ts): at protocol 2025-11-25 the
// client advertises its extensions (with their settings) in initialize,
// and reports the server's, read through the SDK's capability accessor,
// by calling the echo tool.
func TestLegacyExtensions(t *testing.T) {
	var mu sync.Mutex
	var advertised, observed json.RawMessage
	var version string
	mk := newMock(t, func(w http.ResponseWriter, r *http.Request, m recorded) {
		mu.Lock()
		defer mu.Unlock()
		switch m.Method {
		case "initialize":
			var caps struct {
				Extensions json.RawMessage `json:"extensions"`
			}
			json.Unmarshal(m.Params["capabilities"], &caps)
			advertised = caps.Extensions
			json.Unmarshal(m.Params["protocolVersion"], &version)
			reply(w, m.ID, map[string]any{"protocolVersion": "2025-11-25",
				"capabilities": map[string]any{"tools": map[string]any{}, "extensions": json.RawMessage(serverExtensions)},
				"serverInfo":   map[string]any{"name": "legacy-extension-fixture", "version": "1.0.0"}})
		case protocol.MethodToolsList:
			reply(w, m.ID, map[string]any{"tools": []any{map[string]any{"name": echoTool, "inputSchema": map[string]any{
				"type": "object", "properties": map[string]any{"extensions": map[string]any{"type": "object"}}, "required": []string{"extensions"}}}}})
		case protocol.MethodToolsCall:
			var args struct {
				Extensions json.RawMessage `json:"extensions"`
			}
			json.Unmarshal(m.Params["arguments"], &args)
			observed = args.Extensions
			reply(w, m.ID, map[string]any{"content": []any{map[string]any{"type": "text", "text": "recorded"}}})
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
		}
	})
	var exts map[string]json.RawMessage
	json.Unmarshal([]byte(clientExtensions), &exts)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := client.Dial(ctx, mk.srv.URL+"/mcp", client.WithProtocol(client.Pin(protocol.Version20251125)),
		client.WithCapabilityOptions(client.CapabilityOptions{Extensions: exts}))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer c.Close()
	if _, err := c.CallTool(ctx, echoTool, map[string]any{"extensions": c.ServerCapabilities().Extensions}); err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	initialized := len(mk.requests("notifications/initialized")) > 0
	check(t, "legacy-extensions-client-handshake", initialized && version == "2025-11-25", "initialized %v, version %q", initialized, version)
	extensionChecks(t, "client-advertisement", advertised, clientExtensions)
	extensionChecks(t, "client-reception", observed, serverExtensions)
}

// extensionChecks grades each expected extension: present with deeply
// equal settings.
func extensionChecks(t *testing.T, direction string, actual json.RawMessage, expected string) {
	t.Helper()
	var got, want map[string]any
	json.Unmarshal(actual, &got)
	json.Unmarshal([]byte(expected), &want)
	for key, v := range want {
		_, short, _ := strings.Cut(key, "/")
		check(t, "legacy-extensions-"+direction+"-"+short, reflect.DeepEqual(got[key], v), "missing or altered extension %s: got %v, want %v", key, got[key], v)
	}
}
