package main

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/internal/testserver"
)

// writeConduitConfig writes a config file and returns its path.
func writeConduitConfig(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// configWithBroken is a config with a stdio server, an HTTP server, a
// missing executable and a server that never answers.
func configWithBroken(t *testing.T) string {
	srv := testserver.New(testserver.Options{})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	return writeConduitConfig(t, ".mcp.json", map[string]any{"mcpServers": map[string]any{
		"local":   map[string]any{"command": testserverBin, "args": []string{"-era", "${CONDUIT_TEST_ERA:-legacy}"}},
		"remote":  map[string]any{"type": "http", "url": ts.URL + "/mcp"},
		"missing": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")},
		"mute":    map[string]any{"command": testserverBin, "args": []string{"-fault", "silent:method=*"}},
	}})
}

// TestConfigToolsJSON: tools --config --json lists every tool with its
// server and name, every failed server with its error, and waits no
// longer than the servers' own timeout.
func TestConfigToolsJSON(t *testing.T) {
	p := configWithBroken(t)
	start := time.Now()
	r := runConduit(t, "", "tools", "--config", p, "--timeout", "2s", "--json")
	if took := time.Since(start); took > 8*time.Second {
		t.Errorf("tools --config took %v with a 2s timeout", took)
	}
	if r.code != exitNegotiation {
		t.Errorf("exit status %d, want %d (a server failed); stderr:\n%s", r.code, exitNegotiation, r.stderr)
	}
	var out struct {
		Tools []struct {
			Server, Name, QualifiedName string
		} `json:"tools"`
		Servers []struct {
			Name, State string
			Error       *struct{ Kind, Message string }
		} `json:"servers"`
	}
	decodeJSON(t, r, &out)
	perServer := map[string]int{}
	for _, tl := range out.Tools {
		perServer[tl.Server]++
		if tl.QualifiedName != tl.Server+"__"+tl.Name {
			t.Errorf("tool %+v: qualifiedName is not server__name", tl)
		}
	}
	if perServer["local"] == 0 || perServer["remote"] == 0 || len(perServer) != 2 {
		t.Errorf("tools per server = %v, want local and remote only", perServer)
	}
	states := map[string]string{}
	for _, s := range out.Servers {
		states[s.Name] = s.State
		failed := s.Name == "missing" || s.Name == "mute"
		if failed != (s.Error != nil) {
			t.Errorf("server %s: error %+v", s.Name, s.Error)
		}
	}
	if states["local"] != "ready" || states["remote"] != "ready" || states["missing"] != "failed" || states["mute"] != "failed" {
		t.Errorf("states = %v", states)
	}
	// Progress on stderr (not a terminal): a plain line per server as it
	// comes up or fails, then a summary.
	for _, want := range []string{`server "missing"`, `server "mute"`, "no answer within 2s",
		"conduit: server local ready after ", "conduit: server mute failed after ", "conduit: 2/4 servers ready in "} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
}

// TestConfigCommands runs call, prompt, read and probe over all servers
// (catalogue names) and over one (--server).
func TestConfigCommands(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() { ts.CloseClientConnections(); ts.Close(); srv.Close() })
	p := writeConduitConfig(t, ".vscode/mcp.json", map[string]any{"servers": map[string]any{
		"local":  map[string]any{"type": "stdio", "command": testserverBin, "args": []string{"-era", "legacy"}},
		"remote": map[string]any{"type": "http", "url": ts.URL + "/mcp"},
	}})
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"call all", []string{"call", "--config", p, "remote__add", "a=2", "b=3"}, "5"},
		{"call one", []string{"call", "--config", p, "--server", "local", "add", "a=4", "b=3"}, "7"},
		{"prompt all", []string{"prompt", "--config", p, "local__greet", "name=Ada"}, "Ada"},
		{"read all", []string{"read", "--config", p, "file:///hello.txt"}, ""},
		{"probe one", []string{"probe", "--config", p, "--server", "local"}, "Era:               legacy"},
		{"probe all", []string{"probe", "--config", p}, "Server remote (http): ready"},
		{"prompts all", []string{"prompts", "--config", p}, "remote__greet"},
		{"tour", []string{"--config", p}, "Server local (stdio): ready"},
		{"tour tools", []string{"--config", p}, "local__add"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runConduit(t, "", tt.args...)
			if tt.name == "read all" {
				// Both servers list file:///hello.txt: conduit asks which.
				if r.code != exitUsage || !strings.Contains(r.stderr, "--server") {
					t.Errorf("read of a URI two servers list: %d\n%s", r.code, r.stderr)
				}
				return
			}
			if r.code != exitOK || !strings.Contains(r.stdout, tt.want) {
				t.Errorf("conduit %v: exit %d, stdout:\n%s\nstderr:\n%s\nwant %q", tt.args, r.code, r.stdout, r.stderr, tt.want)
			}
		})
	}
}

func TestConfigUsageErrors(t *testing.T) {
	p := writeConduitConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{"a": map[string]any{"command": testserverBin}}})
	bad := writeConduitConfig(t, "bad.json", map[string]any{"mcpServers": map[string]any{"a": map[string]any{"type": "grpc", "url": "http://h/"}}})
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"tools", "--server", "a"}, exitUsage, "--server needs --config"},
		{[]string{"tools", "--config", p, "--server", "b"}, exitUsage, `has no such server (it has: a)`},
		{[]string{"tools", "--config", p, "https://example.com/mcp"}, exitUsage, "--config replaces the target"},
		{[]string{"listen", "--config", p}, exitUsage, "add --server NAME"},
		{[]string{"call", "--config", p, "a__nope"}, exitUsage, `no tool "a__nope"`},
		{[]string{"tools", "--config", bad}, exitError, `server "a": type: unknown transport type "grpc"`},
	}
	for _, tt := range tests {
		r := runConduit(t, "", tt.args...)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.want) {
			t.Errorf("conduit %v: exit %d, stderr %q; want %d and %q", tt.args, r.code, r.stderr, tt.code, tt.want)
		}
	}
}

// TestConfigServerFailure: --server naming a broken server fails like a
// broken target (exit status 3), within the server's timeout.
func TestConfigServerFailure(t *testing.T) {
	p := configWithBroken(t)
	for _, name := range []string{"missing", "mute"} {
		start := time.Now()
		r := runConduit(t, "", "tools", "--config", p, "--server", name, "--timeout", "2s", "--json")
		if r.code != exitNegotiation || !strings.Contains(r.stderr, `connecting to server "`+name+`"`) {
			t.Errorf("tools --server %s: exit %d, stderr %q; want %d", name, r.code, r.stderr, exitNegotiation)
		}
		if took := time.Since(start); took > 8*time.Second {
			t.Errorf("tools --server %s took %v with a 2s timeout", name, took)
		}
		var out struct{ Error struct{ Kind string } }
		decodeJSON(t, r, &out)
		if out.Error.Kind == "" {
			t.Errorf("tools --server %s --json: no error kind in %s", name, r.stdout)
		}
	}
}
