// The hostscale command measures how a host starts many slow stdio
// servers: the time to the first ready server, to all ready, how many are
// ready when it gives up, the peak memory of the host and of all the
// servers together, and, once all are ready and idle, the host's live
// heap and goroutines. It prints one Markdown table row.
//
// Usage (from the repository root):
//
//	go run ./host/internal/cmd/hostscale -n 100 -server go -cpu 1s -max-starting 0
//	go run ./host/internal/cmd/hostscale -n 100 -server node -node-dir interop/node_modules
//
// -server go runs this program again as a server that burns -cpu of CPU
// time before it serves (package slowstart); -server node runs
// @modelcontextprotocol/server-everything from -node-dir (after npm ci in
// interop/). -max-starting is host.Options.MaxStarting (0: the default
// cap, -1: none); every other option is the host's default, as a new
// user gets it. -limit bounds the run.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/host/internal/slowstart"
)

// serveEnv makes this program a slow server (the -server go children).
const serveEnv = "HOSTSCALE_SERVE"

func main() {
	if os.Getenv(serveEnv) == "1" {
		os.Exit(slowstart.Main(os.Args[1:]))
	}
	n := flag.Int("n", 100, "number of servers")
	kind := flag.String("server", "go", "go (burns -cpu, then serves) or node (server-everything)")
	cpu := flag.Duration("cpu", time.Second, "-server go: CPU time each server burns before it serves")
	nodeDir := flag.String("node-dir", "interop/node_modules", "-server node: the node_modules holding server-everything")
	maxStarting := flag.Int("max-starting", 0, "host.Options.MaxStarting (0: default, -1: no cap)")
	limit := flag.Duration("limit", 3*time.Minute, "give up after this long")
	dump := flag.String("goroutines", "", "write the host's goroutines, once all are ready and idle, to this file (pprof's debug=1 text)")
	flag.Parse()
	cfg, err := config(*n, *kind, *cpu, *nodeDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostscale:", err)
		os.Exit(2)
	}
	r, err := measure(cfg, *maxStarting, *limit, *dump)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostscale:", err)
		os.Exit(1)
	}
	capText := fmt.Sprint(*maxStarting)
	switch {
	case *maxStarting == 0:
		capText = "default"
	case *maxStarting < 0:
		capText = "none"
	}
	idle := "—"
	if r.all != 0 {
		idle = fmt.Sprintf("%.1f MiB, %d", float64(r.idleHeap)/(1<<20), r.idleGoroutines)
	}
	fmt.Printf("| %d | %s | %s | %s | %s | %d/%d | %d | %.0f MiB | %.0f MiB | %s |\n",
		*n, *kind, capText, dur(r.first), dur(r.all), r.ready, *n, r.attempts,
		float64(r.hostRSS)/(1<<20), float64(r.serversRSS)/(1<<20), idle)
}

func dur(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return d.Round(100 * time.Millisecond).String()
}

// config builds n servers of kind.
func config(n int, kind string, cpu time.Duration, nodeDir string) (*host.Config, error) {
	var command string
	var args []string
	env := map[string]string{}
	switch kind {
	case "go":
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		command, args, env[serveEnv] = exe, []string{"-cpu", cpu.String()}, "1"
	case "node":
		script, err := filepath.Abs(filepath.Join(nodeDir, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
		if err != nil {
			return nil, err
		}
		if _, err := os.Stat(script); err != nil {
			return nil, fmt.Errorf("server-everything not installed (npm ci in interop/): %w", err)
		}
		command, args = "node", []string{script, "stdio"}
		if node, err := filepath.Abs(filepath.Join(nodeDir, "node22", "bin", "node")); err == nil {
			if _, err := os.Stat(node); err == nil {
				command = node // the pinned Node 22 of interop/package.json
			}
		}
	default:
		return nil, fmt.Errorf("-server %q: want go or node", kind)
	}
	cfg := &host.Config{}
	for i := range n {
		cfg.Servers = append(cfg.Servers, host.ServerConfig{
			Name: fmt.Sprintf("s%03d", i), Type: host.TypeStdio, Command: command, Args: args, Env: env,
		})
	}
	return cfg, nil
}

// result is one run's figures.
type result struct {
	first, all          time.Duration // 0: never
	ready, attempts     int           // at the end
	hostRSS, serversRSS uint64        // peaks, in bytes
	// Once all are ready and idle: the host's heap after a collection,
	// and its goroutines.
	idleHeap       uint64
	idleGoroutines int
}

// idleSettle is how long the host is left alone once every server is
// ready, before its idle heap is read.
const idleSettle = time.Second

// measure starts a host on cfg and follows it until every server is
// ready or limit passes, sampling memory every 250ms.
func measure(cfg *host.Config, maxStarting int, limit time.Duration, dump string) (result, error) {
	var r result
	start := time.Now()
	h, err := host.Start(cfg, &host.Options{MaxStarting: maxStarting})
	if err != nil {
		return r, err
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		changed := h.Changed()
		r.ready, r.attempts = 0, 0
		for _, st := range h.Servers() {
			r.attempts += st.Attempts
			if st.State == host.StateReady {
				r.ready++
			}
		}
		if r.ready > 0 && r.first == 0 {
			r.first = time.Since(start)
		}
		if r.ready == len(cfg.Servers) {
			r.all = time.Since(start)
			break
		}
		select {
		case <-changed:
		case <-tick.C:
			r.serversRSS = max(r.serversRSS, childrenRSS())
		case <-ctx.Done():
			r.hostRSS = selfMaxRSS()
			return r, nil
		}
	}
	r.serversRSS = max(r.serversRSS, childrenRSS())
	r.hostRSS = selfMaxRSS()
	time.Sleep(idleSettle)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	r.idleHeap, r.idleGoroutines = ms.HeapAlloc, runtime.NumGoroutine()
	if dump != "" {
		f, err := os.Create(dump)
		if err != nil {
			return r, err
		}
		defer f.Close()
		if err := pprof.Lookup("goroutine").WriteTo(f, 1); err != nil {
			return r, err
		}
	}
	return r, nil
}
