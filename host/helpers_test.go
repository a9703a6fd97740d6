package host_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// writeConfig writes a configuration file (v marshalled as JSON) named
// name in a new temporary directory and returns its path.
func writeConfig(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// stdioServer is a config entry running the test server.
func stdioServer(flags ...string) map[string]any {
	return map[string]any{"command": testserverBin, "args": append([]string{}, flags...)}
}

// httpServer starts the test server over Streamable HTTP on 127.0.0.1.
func httpServer(t *testing.T, opts testserver.Options) (*testserver.Server, string) {
	t.Helper()
	srv := testserver.New(opts)
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
		srv.Close()
	})
	return srv, ts.URL + "/mcp"
}

// startHost loads path and starts a host that is closed at the end of
// the test.
func startHost(t *testing.T, path string, opts *host.Options) *host.Host {
	t.Helper()
	cfg, err := host.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return h
}

// waitFor waits (bounded) until cond holds, waking on every host change.
func waitFor(t *testing.T, h *host.Host, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	for {
		ch := h.Changed()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s: not reached within %v; servers: %+v", what, timeout, h.Servers())
		}
	}
}

func toolNames(h *host.Host) []string {
	var out []string
	for _, tl := range h.Tools() {
		out = append(out, tl.Name)
	}
	return out
}

func state(h *host.Host, name string) host.State {
	st, _ := h.Server(name)
	return st.State
}

// newHTTPTestServer serves h on 127.0.0.1 until the end of the test.
func newHTTPTestServer(t *testing.T, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	return ts.URL
}
