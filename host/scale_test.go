package host_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/host"
)

// TestTwentyServers connects 20 stdio servers at once and checks that
// memory and goroutines stay bounded per server and that Close leaves no
// process and no goroutine behind (goleak checks the rest in TestMain).
func TestTwentyServers(t *testing.T) {
	const n = 20
	dir := t.TempDir()
	servers := map[string]any{}
	recordsOf := make([]string, n)
	for i := range n {
		recordsOf[i] = filepath.Join(dir, fmt.Sprintf("record-%02d.jsonl", i))
		servers[fmt.Sprintf("s%02d", i)] = stdioServer("-record", recordsOf[i])
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	baseG, baseHeap := measure()
	start := time.Now()
	h, err := host.Start(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	ready := time.Since(start)
	for _, st := range h.Servers() {
		if st.State != host.StateReady {
			t.Errorf("%s: %v %v", st.Name, st.State, st.Err)
		}
	}
	tools := h.Tools()
	if len(tools) != n*20 {
		t.Errorf("%d tools, want %d", len(tools), n*20)
	}
	for i := range n {
		name := fmt.Sprintf("s%02d__echo", i)
		if res, err := h.CallTool(ctx, name, map[string]any{"text": name}); err != nil || res.Content[0].Text != name {
			t.Errorf("CallTool(%s) = %+v, %v", name, res, err)
		}
	}
	runG, runHeap := measure()
	start = time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Since(start)
	endG := settleGoroutines(baseG)
	t.Logf("\n| servers | ready after | goroutines (before / running / after Close) | heap in use (before / running) | Close |\n"+
		"|---|---|---|---|---|\n| %d | %v | %d / %d / %d | %.1f MiB / %.1f MiB | %v |",
		n, ready.Round(time.Millisecond), baseG, runG, endG,
		float64(baseHeap)/(1<<20), float64(runHeap)/(1<<20), closed.Round(time.Millisecond))
	if per := (runG - baseG) / n; per > 40 {
		t.Errorf("%d goroutines per server, want at most 40", per)
	}
	if per := (int64(runHeap) - int64(baseHeap)) / n; per > 2<<20 {
		t.Errorf("%d bytes of heap per server, want at most 2 MiB", per)
	}
	if endG > baseG {
		t.Errorf("%d goroutines after Close, %d before Start", endG, baseG)
	}
	for i, path := range recordsOf {
		if got := len(records(t, path)); got != 1 {
			t.Errorf("server %d: %d process records after Close, want 1 (the process stopped)", i, got)
		}
	}
}

func measure() (goroutines int, heap uint64) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return runtime.NumGoroutine(), ms.HeapInuse
}

// settleGoroutines waits (bounded) for goroutines that are exiting to be
// gone, and returns the count.
func settleGoroutines(want int) int {
	deadline := time.Now().Add(5 * time.Second)
	for {
		g := runtime.NumGoroutine()
		if g <= want || time.Now().After(deadline) {
			return g
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestCloseConcurrent: Close stops servers concurrently. Each of these
// ignores stdin, so stopping one takes the transport's TerminateDelay
// (2s) before SIGTERM; one at a time, five would take 10s.
func TestCloseConcurrent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("uses sleep(1)")
	}
	servers := map[string]any{}
	for i := range 5 {
		servers[fmt.Sprintf("hung%d", i)] = map[string]any{"command": "sleep", "args": []string{"600"}}
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, &host.Options{MaxStarting: -1, Server: func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{ConnectTimeout: time.Minute, ProbeTimeout: time.Minute}
	}})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "all connecting", 10*time.Second, func() bool {
		for _, st := range h.Servers() {
			if st.State != host.StateConnecting {
				return false
			}
		}
		return true
	})
	time.Sleep(100 * time.Millisecond) // let the processes start
	start := time.Now()
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("Close of 5 servers that ignore stdin: %v", took.Round(time.Millisecond))
	if took > 6*time.Second {
		t.Errorf("Close took %v, want about one TerminateDelay (servers stopped concurrently)", took)
	}
}
