package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// fast gives every server short bounds, so that broken servers fail fast.
func fast(timeout time.Duration) *host.Options {
	return &host.Options{
		Server: func(host.ServerConfig) host.ServerOptions {
			return host.ServerOptions{ConnectTimeout: timeout, ProbeTimeout: 300 * time.Millisecond}
		},
		Reconnect: host.Reconnect{InitialInterval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond},
	}
}

func silent() testserver.Fault { return testserver.Fault{Kind: testserver.FaultSilent, Method: "*"} }

// TestIsolation starts good servers next to a missing executable, a stdio
// server that never answers and an HTTP server that never answers: Wait
// returns within the broken servers' own timeout, the good servers work,
// and the broken ones report why and keep being retried.
func TestIsolation(t *testing.T) {
	_, goodURL := httpServer(t, testserver.Options{})
	_, silentURL := httpServer(t, testserver.Options{Faults: []testserver.Fault{silent()}})
	p := writeConfig(t, ".mcp.json", map[string]any{"mcpServers": map[string]any{
		"good-stdio": stdioServer(),
		"good-http":  map[string]any{"type": "http", "url": goodURL},
		"missing":    map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")},
		"mute-stdio": stdioServer("-fault", "silent:method=*"),
		"mute-http":  map[string]any{"type": "http", "url": silentURL},
	}})
	const timeout = 2 * time.Second
	h := startHost(t, p, fast(timeout))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > timeout+3*time.Second {
		t.Errorf("Wait took %v, want about the broken servers' timeout %v", took, timeout)
	}
	for _, name := range []string{"good-stdio", "good-http"} {
		if st := state(h, name); st != host.StateReady {
			t.Errorf("%s: state %v, want ready", name, st)
		}
		res, err := h.CallTool(ctx, name+"__echo", map[string]any{"text": name})
		if err != nil || len(res.Content) == 0 || res.Content[0].Text != name {
			t.Errorf("CallTool(%s__echo) = %+v, %v", name, res, err)
		}
	}
	st, _ := h.Server("missing")
	if st.State == host.StateReady || !errors.Is(st.Err, exec.ErrNotFound) && !errors.Is(st.Err, os.ErrNotExist) {
		t.Errorf("missing: %v %v, want failed with a not-found error", st.State, st.Err)
	}
	for _, name := range []string{"mute-stdio", "mute-http"} {
		st, _ := h.Server(name)
		if st.State == host.StateReady || st.Err == nil || !strings.Contains(st.Err.Error(), "no answer within 2s") {
			t.Errorf("%s: %v %v, want failed with no answer", name, st.State, st.Err)
		}
	}
	for _, tl := range h.Tools() {
		if tl.Server != "good-stdio" && tl.Server != "good-http" {
			t.Errorf("tool %s of broken server %s in the catalogue", tl.Name, tl.Server)
		}
	}
	// A tool of a server that never connected is a *ServerError with the
	// server's error (issue 26, item 5); a name no server has is not found.
	for _, name := range []string{"missing__echo", "mute-stdio__anything"} {
		_, err := h.CallTool(ctx, name, map[string]any{"text": "x"})
		server, _, _ := strings.Cut(name, "__")
		if se, ok := errors.AsType[*host.ServerError](err); !errors.Is(err, host.ErrNotReady) || errors.Is(err, host.ErrNotFound) || !ok || se.Server != server || se.Err == nil {
			t.Errorf("CallTool(%s) = %v, want a *ServerError for %s with its error, matching ErrNotReady", name, err, server)
		}
	}
	for _, name := range []string{"nosuch__echo", "good-stdio__nosuch", "echo"} {
		if _, err := h.CallTool(ctx, name, nil); !errors.Is(err, host.ErrNotFound) || errors.Is(err, host.ErrNotReady) {
			t.Errorf("CallTool(%s) = %v, want ErrNotFound", name, err)
		}
	}
	if _, err := h.GetPrompt(ctx, "missing__greet", nil); !errors.Is(err, host.ErrNotReady) {
		t.Errorf("GetPrompt(missing__greet) = %v, want ErrNotReady", err)
	}
	_, err := h.Client("missing")
	var se *host.ServerError
	if !errors.Is(err, host.ErrNotReady) || !errors.As(err, &se) || se.Server != "missing" || se.Err == nil {
		t.Errorf("Client(missing) = %v, want a *ServerError for missing with its error, matching ErrNotReady", err)
	}
	waitFor(t, h, "missing retried", 10*time.Second, func() bool {
		st, _ := h.Server("missing")
		return st.Attempts >= 3
	})
}

// TestDiesMidSession kills a stdio server during a call while its
// restart is refused: the host drops its tools, retries with backoff, and
// brings them back once the server can start again; the other server is
// never affected.
func TestDiesMidSession(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses a shell script")
	}
	dir := t.TempDir()
	down := filepath.Join(dir, "down")
	script := filepath.Join(dir, "server.sh")
	body := fmt.Sprintf("#!/bin/sh\n[ -e %q ] && exit 3\nexec %q -era legacy -fault exit:method=tools/call\n", down, testserverBin)
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	_, url := httpServer(t, testserver.Options{})
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"flaky":  map[string]any{"command": script},
		"steady": map[string]any{"url": url},
	}})
	h := startHost(t, p, fast(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Tool("flaky__echo"); !ok {
		t.Fatalf("flaky__echo not in the catalogue: %v (%+v)", toolNames(h), h.Servers())
	}
	os.WriteFile(down, nil, 0o644)
	if _, err := h.CallTool(ctx, "flaky__echo", map[string]any{"text": "boom"}); err == nil {
		t.Errorf("CallTool(flaky__echo) on a dying server succeeded")
	}
	waitFor(t, h, "flaky failed", 20*time.Second, func() bool {
		_, has := h.Tool("flaky__echo")
		return state(h, "flaky") == host.StateFailed && !has
	})
	st, _ := h.Server("flaky")
	if st.Err == nil {
		t.Errorf("flaky failed without an error")
	}
	// Its tools left the catalogue, but calling one says the server is
	// down, with why, not that the name is unknown (issue 26, item 5).
	_, err := h.CallTool(ctx, "flaky__echo", map[string]any{"text": "x"})
	if se, ok := errors.AsType[*host.ServerError](err); !errors.Is(err, host.ErrNotReady) || !ok || se.Server != "flaky" || se.Err == nil {
		t.Errorf("CallTool(flaky__echo) while flaky is down = %v, want a *ServerError with its error, matching ErrNotReady", err)
	}
	if _, err := h.GetPrompt(ctx, "flaky__greet", nil); !errors.Is(err, host.ErrNotReady) {
		t.Errorf("GetPrompt(flaky__greet) while flaky is down = %v, want ErrNotReady", err)
	}
	if _, err := h.CallTool(ctx, "flaky__nosuch", nil); !errors.Is(err, host.ErrNotFound) {
		t.Errorf("CallTool(flaky__nosuch) = %v, want ErrNotFound (flaky never listed it)", err)
	}
	t.Logf("flaky after its death: %v, %v", st.State, st.Err)
	if res, err := h.CallTool(ctx, "steady__echo", map[string]any{"text": "still here"}); err != nil || res.Content[0].Text != "still here" {
		t.Errorf("CallTool(steady__echo) while flaky is down = %+v, %v", res, err)
	}
	waitFor(t, h, "flaky retried", 20*time.Second, func() bool {
		st, _ := h.Server("flaky")
		return st.Attempts >= 3
	})
	os.Remove(down)
	waitFor(t, h, "flaky back", 20*time.Second, func() bool {
		_, has := h.Tool("flaky__echo")
		return state(h, "flaky") == host.StateReady && has
	})
	st, _ = h.Server("flaky")
	if st.Connects != 2 || st.Err != nil || st.LastErr == nil {
		t.Errorf("flaky after its return: connects %d, err %v, last error %v; want 2, nil, the death", st.Connects, st.Err, st.LastErr)
	}
}

// TestRefreshOnReconnect: a stdio server that exits once is respawned by
// the session itself; the host notices the reconnection and lists the
// new process's tools again.
func TestRefreshOnReconnect(t *testing.T) {
	dir := t.TempDir()
	record := filepath.Join(dir, "record.jsonl")
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"s": stdioServer("-era", "legacy", "-fault", "exit:method=tools/call", "-exit-marker", filepath.Join(dir, "marker"), "-record", record),
	}})
	h := startHost(t, p, fast(5*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	h.CallTool(ctx, "s__echo", map[string]any{"text": "x"}) // the first process exits
	waitFor(t, h, "second process listed", 20*time.Second, func() bool {
		return len(records(t, record)) == 1 // the first process has stopped
	})
	// The heal is counted once the session answers again and the
	// catalogue was listed again. (A call during that listing would race
	// in the client's tool registry: client/tools.go, add rewrites the
	// entry that idempotent reads.)
	waitFor(t, h, "the heal counted", 20*time.Second, func() bool {
		st, _ := h.Server("s")
		return st.Heals == 1 && st.Connects == 1
	})
	// Close once the respawned server served a call, so that it writes
	// its record.
	if _, err := h.CallTool(ctx, "s__echo", map[string]any{"text": "y"}); err != nil {
		t.Fatalf("CallTool after the respawn = %v", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	recs := records(t, record)
	if len(recs) != 2 {
		t.Fatalf("%d processes recorded, want 2", len(recs))
	}
	if !slicesContains(recs[1], protocol.MethodToolsList) {
		t.Errorf("respawned process received %v, want a tools/list from the host's refresh", recs[1])
	}
}

// records reads the -record file of the test server: one line per
// process that stopped, each with the methods it received.
func records(t *testing.T, path string) [][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var rec struct {
			Received []struct {
				Method string `json:"method"`
			} `json:"received"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("record %q: %v", line, err)
		}
		var methods []string
		for _, r := range rec.Received {
			methods = append(methods, r.Method)
		}
		out = append(out, methods)
	}
	return out
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestListChanged: a list_changed notification refreshes the server's
// tools in the catalogue, in both eras; the user's own listener still
// hears it.
func TestListChanged(t *testing.T) {
	for _, era := range []testserver.Era{testserver.ModernOnly, testserver.LegacyOnly} {
		t.Run(era.String(), func(t *testing.T) {
			only := testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list", Times: 1,
				Result: json.RawMessage(`{"resultType":"complete","tools":[{"name":"only","inputSchema":{"type":"object"}}]}`)}
			srv, url := httpServer(t, testserver.Options{Era: era, Faults: []testserver.Fault{only}})
			p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{"s": map[string]any{"url": url}}})
			heard := make(chan struct{}, 10)
			opts := fast(5 * time.Second)
			opts.Server = func(host.ServerConfig) host.ServerOptions {
				return host.ServerOptions{Handler: toolsListener(func() { heard <- struct{}{} })}
			}
			h := startHost(t, p, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			if got := toolNames(h); len(got) != 1 || got[0] != "s__only" {
				t.Fatalf("tools before the change = %v, want [s__only]", got)
			}
			waitListening(t, srv, era)
			promptLists := countMethod(srv, protocol.MethodPromptsList)
			srv.NotifyToolsChanged()
			waitFor(t, h, "tools refreshed", 10*time.Second, func() bool {
				_, ok := h.Tool("s__echo")
				return ok
			})
			if _, ok := h.Tool("s__only"); ok {
				t.Errorf("s__only still listed after the refresh")
			}
			if got := countMethod(srv, protocol.MethodPromptsList); got != promptLists {
				t.Errorf("prompts/list sent %d times after a tools change, want 0 (only tools are re-listed)", got-promptLists)
			}
			select {
			case <-heard:
			case <-ctx.Done():
				t.Errorf("the user's ToolsChangedListener was not called")
			}

			// The same for prompts and resources, each re-listing only
			// its own kind.
			for _, k := range []struct {
				method, other string
				notify        func()
				count         func() int
			}{
				{protocol.MethodPromptsList, protocol.MethodToolsList, srv.NotifyPromptsChanged, func() int { return len(h.Prompts()) }},
				{protocol.MethodResourcesList, protocol.MethodPromptsList, srv.NotifyResourcesChanged, func() int { return len(h.Resources()) }},
			} {
				lists, others := countMethod(srv, k.method), countMethod(srv, k.other)
				k.notify()
				waitFor(t, h, k.method+" again", 10*time.Second, func() bool { return countMethod(srv, k.method) > lists })
				waitFor(t, h, k.method+" published", 10*time.Second, func() bool { return k.count() > 0 })
				if got := countMethod(srv, k.other); got != others {
					t.Errorf("%s sent %d times after a %s change, want 0", k.other, got-others, k.method)
				}
			}
		})
	}
}

type toolsListener func()

func (f toolsListener) OnToolsChanged(context.Context) { f() }

// waitListening waits (bounded) until the client listens for
// notifications: a modern subscriptions/listen stream, or the legacy GET
// stream.
func waitListening(t *testing.T, srv *testserver.Server, era testserver.Era) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if era == testserver.ModernOnly {
		for srv.Listens() == 0 {
			select {
			case <-ctx.Done():
				t.Fatal("no subscriptions/listen stream")
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// TestCollisions: names that sanitize alike, and a naming function that
// drops the server, still give unique valid names, and calls go to the
// server that offers the tool.
func TestCollisions(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)
	srvA, urlA := httpServer(t, testserver.Options{})
	srvB, urlB := httpServer(t, testserver.Options{})
	servers := map[string]*testserver.Server{"a.b": srvA, "a_b": srvB}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"a.b": map[string]any{"url": urlA},
		"a_b": map[string]any{"url": urlB},
	}})
	for _, tt := range []struct {
		name   string
		naming func(server, name string) string
	}{
		{"default", nil},
		{"tool name only", func(_, name string) string { return name }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			opts := fast(5 * time.Second)
			opts.Name = tt.naming
			h := startHost(t, p, opts)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := h.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			tools := h.Tools()
			if len(tools) != 36 {
				t.Fatalf("%d tools, want 36 (18 per server): %v", len(tools), toolNames(h))
			}
			seen := map[string]bool{}
			for _, tl := range tools {
				if seen[tl.Name] || !valid.MatchString(tl.Name) {
					t.Errorf("name %q is a duplicate or invalid", tl.Name)
				}
				seen[tl.Name] = true
			}
			for _, tl := range tools {
				if tl.Tool.Name != "echo" {
					continue
				}
				before := countCalls(servers[tl.Server])
				if _, err := h.CallTool(ctx, tl.Name, map[string]any{"text": "x"}); err != nil {
					t.Fatalf("CallTool(%s) = %v", tl.Name, err)
				}
				if got := countCalls(servers[tl.Server]) - before; got != 1 {
					t.Errorf("CallTool(%s) reached server %s %d times, want 1", tl.Name, tl.Server, got)
				}
			}
		})
	}
}

func countCalls(s *testserver.Server) int { return countMethod(s, protocol.MethodToolsCall) }

func countMethod(s *testserver.Server, method string) int {
	n := 0
	for _, m := range s.ReceivedMethods() {
		if m == method {
			n++
		}
	}
	return n
}

// TestFormatsEndToEnd connects servers from a VS Code file (an input in
// a header) and a Claude Code file (${VAR:-default} in args).
func TestFormatsEndToEnd(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	var mu sync.Mutex
	var tokens []string
	ts := newHTTPTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		tokens = append(tokens, r.Header.Get("Authorization"))
		mu.Unlock()
		srv.Handler().ServeHTTP(w, r)
	}))
	t.Cleanup(func() { srv.Close() })
	vs := writeConfig(t, ".vscode/mcp.json", map[string]any{
		"inputs": []any{map[string]any{"type": "promptString", "id": "token", "description": "Token", "password": true}},
		"servers": map[string]any{
			"remote": map[string]any{"type": "http", "url": ts + "/mcp", "headers": map[string]any{"Authorization": "Bearer ${input:token}"}},
			"local":  map[string]any{"type": "stdio", "command": testserverBin},
		},
	})
	cfg, err := host.Load(vs, &host.LoadOptions{Input: func(in host.Input) (string, error) { return "t-" + in.ID, nil }})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, fast(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.Wait(ctx)
	if len(h.Tools()) == 0 || state(h, "remote") != host.StateReady || state(h, "local") != host.StateReady {
		t.Fatalf("servers: %+v", h.Servers())
	}
	mu.Lock()
	for _, tok := range tokens {
		if tok != "Bearer t-token" {
			t.Errorf("Authorization = %q, want Bearer t-token", tok)
		}
	}
	mu.Unlock()

	t.Setenv("CONDUIT_HOST_TEST_ERA", "")
	cc := writeConfig(t, ".mcp.json", map[string]any{"mcpServers": map[string]any{
		"legacy": map[string]any{"type": "stdio", "command": testserverBin, "args": []any{"-era", "${CONDUIT_HOST_TEST_ERA:-legacy}"}},
	}})
	h2 := startHost(t, cc, fast(5*time.Second))
	h2.Wait(ctx)
	c, err := h2.Client("legacy")
	if err != nil {
		t.Fatal(err)
	}
	if c.Negotiated().Era != negotiation.EraLegacy {
		t.Errorf("era = %v, want legacy (the default of ${CONDUIT_HOST_TEST_ERA:-legacy})", c.Negotiated().Era)
	}
}

// TestServerOptions gives each server its own protocol mode and handler.
func TestServerOptions(t *testing.T) {
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"old": stdioServer(),
		"new": stdioServer(),
	}})
	h := startHost(t, p, &host.Options{Server: func(sc host.ServerConfig) host.ServerOptions {
		o := host.ServerOptions{Protocol: client.Modern}
		if sc.Name == "old" {
			o.Protocol = client.Legacy
			o.Handler = rootsLister{}
		}
		return o
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.Wait(ctx)
	old, err1 := h.Client("old")
	nw, err2 := h.Client("new")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if old.Negotiated().Era != negotiation.EraLegacy || nw.Negotiated().Era != negotiation.EraModern {
		t.Errorf("eras = %v, %v; want legacy, modern", old.Negotiated().Era, nw.Negotiated().Era)
	}
	if old.Negotiated().ClientCapabilities.Roots == nil || nw.Negotiated().ClientCapabilities.Roots != nil {
		t.Errorf("roots capability: old %v, new %v; want only old (its handler)", old.Negotiated().ClientCapabilities.Roots, nw.Negotiated().ClientCapabilities.Roots)
	}
	res, err := h.CallTool(ctx, "old__roots", map[string]any{})
	if err != nil || !strings.Contains(res.Content[0].Text, "file:///work") {
		t.Errorf("CallTool(old__roots) = %+v, %v; want the handler's root", res, err)
	}
}

type rootsLister struct{}

func (rootsLister) ListRoots(context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///work", Name: "work"}}, nil
}

// TestFunctionDeclarations checks the LLM view of the catalogue.
func TestFunctionDeclarations(t *testing.T) {
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{"calc": stdioServer()}})
	h := startHost(t, p, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.Wait(ctx)
	var found bool
	for _, d := range h.FunctionDeclarations() {
		if d.Name != "calc__add" {
			continue
		}
		found = true
		if d.Description != "Adds a and b." {
			t.Errorf("description = %q", d.Description)
		}
		var schema struct {
			Type       string         `json:"type"`
			Properties map[string]any `json:"properties"`
			Required   []string       `json:"required"`
		}
		if err := json.Unmarshal(d.Parameters, &schema); err != nil || schema.Type != "object" || len(schema.Properties) != 2 || len(schema.Required) != 2 {
			t.Errorf("parameters = %s (%v)", d.Parameters, err)
		}
		out, _ := json.Marshal(d)
		if !strings.HasPrefix(string(out), `{"name":"calc__add","description":"Adds a and b.","parameters":{`) {
			t.Errorf("JSON = %s", out)
		}
	}
	if !found {
		t.Fatalf("calc__add not declared: %v", toolNames(h))
	}
	empty := host.Tool{Name: "x", Tool: protocol.Tool{Name: "x", Title: "X"}}.FunctionDeclaration()
	if string(empty.Parameters) != `{"type":"object","properties":{}}` || empty.Description != "X" {
		t.Errorf("declaration without a schema = %+v", empty)
	}
}

// TestClose: Close while a server is still connecting returns at once,
// is idempotent, and later calls fail with ErrClosed.
func TestClose(t *testing.T) {
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"ok":   stdioServer(),
		"mute": stdioServer("-fault", "silent:method=*"),
	}})
	cfg, _ := host.Load(p, nil)
	h, err := host.Start(cfg, &host.Options{Server: func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{ConnectTimeout: time.Minute, ProbeTimeout: 30 * time.Second}
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "ok ready", 20*time.Second, func() bool { return state(h, "ok") == host.StateReady })
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("Close took %v", took)
	}
	if err := h.Close(); err != nil {
		t.Errorf("second Close() = %v", err)
	}
	for _, st := range h.Servers() {
		if st.State != host.StateClosed {
			t.Errorf("%s: %v after Close", st.Name, st.State)
		}
	}
	if _, err := h.Client("ok"); !errors.Is(err, host.ErrClosed) {
		t.Errorf("Client after Close = %v, want ErrClosed", err)
	}
	if len(h.Tools()) != 0 {
		t.Errorf("tools after Close: %v", toolNames(h))
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, cfg := range []*host.Config{
		{Servers: []host.ServerConfig{{Name: "a", Type: "stdio", Command: "x"}, {Name: "a", Type: "stdio", Command: "y"}}},
		{Servers: []host.ServerConfig{{Name: "a", Type: "grpc", URL: "http://h/"}}},
		{Servers: []host.ServerConfig{{Name: "", Command: "x"}}},
	} {
		if _, err := host.Start(cfg, nil); !errors.As(err, new(*host.ConfigError)) {
			t.Errorf("Start(%+v) = %v, want a *ConfigError", cfg.Servers, err)
		}
	}
}

// TestTransports connects a server of every transport type from one file,
// a WebSocket server with authorization among them.
func TestTransports(t *testing.T) {
	srv := testserver.New(testserver.Options{})
	t.Cleanup(func() { srv.Close() })
	var mu sync.Mutex
	auths := map[string]string{}
	mux := http.NewServeMux()
	record := func(path string, h http.Handler) {
		mux.Handle(path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			auths[path] = r.Header.Get("Authorization")
			mu.Unlock()
			h.ServeHTTP(w, r)
		}))
	}
	record("/mcp", srv.Handler())
	record("/sse", srv.SSEHandler())
	record("/ws", srv.WebSocketHandler())
	record("/ws-auth", srv.WebSocketHandler())
	base := newHTTPTestServer(t, mux)
	ws := "ws" + strings.TrimPrefix(base, "http")
	p := writeConfig(t, ".cursor/mcp.json", map[string]any{"mcpServers": map[string]any{
		"http":     map[string]any{"url": base + "/mcp"},
		"sse":      map[string]any{"type": "sse", "url": base + "/sse"},
		"ws":       map[string]any{"url": ws + "/ws"},
		"ws-typed": map[string]any{"type": "websocket", "url": base + "/ws"},
		"ws-auth":  map[string]any{"type": "websocket", "url": base + "/ws-auth"},
	}})
	h := startHost(t, p, &host.Options{Server: func(sc host.ServerConfig) host.ServerOptions {
		o := host.ServerOptions{ConnectTimeout: 10 * time.Second}
		if sc.Name == "ws-auth" {
			o.Auth = &client.Auth{Tokens: transport.TokenSourceFunc(func(context.Context) (string, error) { return "tok", nil })}
		}
		return o
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h.Wait(ctx)
	want := map[string]string{"http": "http", "sse": "sse", "ws": "websocket", "ws-typed": "websocket", "ws-auth": "websocket"}
	for name, kind := range want {
		c, err := h.Client(name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got := c.Negotiated().Transport; got != kind {
			t.Errorf("%s: transport %q, want %q", name, got, kind)
		}
		if res, err := h.CallTool(ctx, name+"__echo", map[string]any{"text": name}); err != nil || res.Content[0].Text != name {
			t.Errorf("CallTool(%s__echo) = %+v, %v", name, res, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if auths["/ws-auth"] != "Bearer tok" || auths["/ws"] != "" {
		t.Errorf("Authorization seen = %q; want Bearer tok on /ws-auth only", auths)
	}
}

// TestReconnectDisabled: with Reconnect.Disabled a failed server stays
// failed, tried once.
func TestReconnectDisabled(t *testing.T) {
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"missing": map[string]any{"command": filepath.Join(t.TempDir(), "nope")},
	}})
	opts := fast(2 * time.Second)
	opts.Reconnect.Disabled = true
	h := startHost(t, p, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.Wait(ctx)
	// Long enough for several retries at the 50ms backoff of fast.
	time.Sleep(300 * time.Millisecond)
	st, _ := h.Server("missing")
	if st.State != host.StateFailed || st.Attempts != 1 {
		t.Errorf("missing: %v after %d attempts, want failed after 1", st.State, st.Attempts)
	}
}

// TestStartBuiltConfig starts a Config built in code, without a type: it
// is inferred as Parse would.
func TestStartBuiltConfig(t *testing.T) {
	args := []string{"-era", "legacy"}
	h, err := host.Start(&host.Config{Servers: []host.ServerConfig{{Name: "a", Command: testserverBin, Args: args}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	args[1] = "modern" // the host copied the config
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h.Wait(ctx)
	c, err := h.Client("a")
	if err != nil || c.Negotiated().Era != negotiation.EraLegacy {
		t.Fatalf("Client(a) = %v, %v; want a legacy client", c, err)
	}
	if st, _ := h.Server("a"); st.Type != host.TypeStdio {
		t.Errorf("type = %q, want stdio", st.Type)
	}
}

// TestIdleTimeout: ServerOptions.IdleTimeout ends a call the server never
// answers, with a timeout error, long before the caller's context.
func TestIdleTimeout(t *testing.T) {
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"mute": stdioServer("-fault", "silent:method=tools/call"),
	}})
	h := startHost(t, p, &host.Options{Server: func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{IdleTimeout: 300 * time.Millisecond}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	_, err := h.CallTool(ctx, "mute__echo", map[string]any{"text": "x"})
	if ce, ok := errors.AsType[*client.Error](err); !ok || ce.Kind != client.KindTimeout || ctx.Err() != nil {
		t.Errorf("CallTool of a tool that never answers = %v, want a timeout error before the caller's deadline", err)
	}
}
