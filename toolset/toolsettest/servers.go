package toolsettest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/toolset"
)

// Servers are real MCP servers of both eras behind one host, for the
// adapters' tests: "modern", Conduit's test server in this process
// (2026-07-28 only, over Streamable HTTP; [Servers.Modern] shows what it
// received), and "legacy", conduit serve --era legacy, a subprocess
// speaking stdio (2025-11-25), built from this repository.
type Servers struct {
	Host   *host.Host
	Modern *conduittest.Server
}

// StartServers starts the servers and a host over an mcpServers file
// naming them; all stop with the test.
func StartServers(t testing.TB) *Servers {
	t.Helper()
	modern := conduittest.NewServer(t, conduittest.WithEra(conduittest.Modern))
	bin := ConduitBinary(t)
	file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"modern": map[string]any{"url": modern.URL()},
		"legacy": map[string]any{"command": bin, "args": []string{"serve", "--era", "legacy"}},
	}})
	cfg, err := host.Parse("mcp.json", file, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range h.Servers() {
		if s.Err != nil {
			t.Fatalf("server %s: %v", s.Name, s.Err)
		}
	}
	return &Servers{Host: h, Modern: modern}
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

// ConduitBinary builds the conduit command of this repository once per
// test process and returns its path.
func ConduitBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		var root []byte
		root, buildErr = exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/conduitmcp/conduit").Output()
		if buildErr != nil {
			return
		}
		buildDir, buildErr = os.MkdirTemp("", "conduit-bin-")
		if buildErr != nil {
			return
		}
		cmd := exec.Command("go", "build", "-o", filepath.Join(buildDir, "conduit"), "./cmd/conduit")
		cmd.Dir = strings.TrimSpace(string(root))
		cmd.Stderr = os.Stderr
		buildErr = cmd.Run()
	})
	if buildErr != nil {
		t.Fatalf("building conduit: %v", buildErr)
	}
	return filepath.Join(buildDir, "conduit")
}

// RemoveBinary removes what [ConduitBinary] built; call it from TestMain
// after the tests.
func RemoveBinary() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Endpoint is a scripted model API over HTTP on 127.0.0.1: it records each
// request body and answers with what the script returns for it.
type Endpoint struct {
	URL string

	mu     sync.Mutex
	bodies [][]byte
}

// Script answers the n-th request (from 0) of path with a status and a
// JSON body.
type Script func(n int, path string, body []byte) (status int, reply any)

// NewEndpoint starts an endpoint that stops with the test.
func NewEndpoint(t testing.TB, script Script) *Endpoint {
	e, stop := StartEndpoint(script)
	t.Cleanup(stop)
	return e
}

// StartEndpoint starts an endpoint outside tests (the examples' scripted
// model); stop closes it.
func StartEndpoint(script Script) (e *Endpoint, stop func()) {
	e = &Endpoint{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		e.mu.Lock()
		n := len(e.bodies)
		e.bodies = append(e.bodies, body)
		e.mu.Unlock()
		status, reply := script(n, r.URL.Path, body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(reply)
	}))
	e.URL = srv.URL
	return e, srv.Close
}

// Requests returns the bodies received so far.
func (e *Endpoint) Requests() [][]byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([][]byte(nil), e.bodies...)
}

// CallsReceived returns the tools/call requests a test server received,
// as "name arguments".
func CallsReceived(srv *conduittest.Server) []string {
	var out []string
	for _, m := range srv.Received() {
		if m.Method != "tools/call" {
			continue
		}
		var p struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &p)
		out = append(out, p.Name+" "+string(p.Arguments))
	}
	return out
}

// DemoHost starts a host over the mcpServers file at path or, when path
// is "", over Conduit's test server served on 127.0.0.1 (the examples'
// default, which needs no installed server); stop closes both.
func DemoHost(ctx context.Context, path string) (h *host.Host, stop func(), err error) {
	var cfg *host.Config
	closeServer := func() {}
	if path != "" {
		cfg, err = host.Load(path, nil)
	} else {
		var srv *conduittest.Server
		if srv, err = conduittest.New(); err != nil {
			return nil, nil, err
		}
		closeServer = func() { srv.Close() }
		file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"demo": map[string]any{"url": srv.URL()}}})
		cfg, err = host.Parse("mcp.json", file, nil)
	}
	if err == nil {
		h, err = host.Start(cfg, nil)
	}
	if err != nil {
		closeServer()
		return nil, nil, err
	}
	if err := h.Wait(ctx); err != nil {
		h.Close()
		closeServer()
		return nil, nil, err
	}
	return h, func() { h.Close(); closeServer() }, nil
}

// LoadServer starts Conduit's test server of era in this process, connects
// a client to it (closed when the test ends) and loads its tools: the
// server, to see what it received ([CallsReceived]), and the Set.
func LoadServer(ctx context.Context, t testing.TB, era conduittest.Era) (*conduittest.Server, *toolset.Set) {
	t.Helper()
	srv := conduittest.NewServer(t, conduittest.WithEra(era))
	c, err := client.Dial(ctx, srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	set, err := toolset.Load(ctx, toolset.FromClient(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, set
}
