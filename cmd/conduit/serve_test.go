package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/conduittest"
)

// probeEra runs conduit probe --json against target args and returns the
// era it reports.
func probeEra(t *testing.T, args ...string) (string, result) {
	t.Helper()
	r := runConduit(t, "", append([]string{"probe", "--json"}, args...)...)
	var p probeJSON
	if err := json.Unmarshal([]byte(r.stdout), &p); err != nil {
		t.Fatalf("probe output %q: %v (stderr %s)", r.stdout, err, r.stderr)
	}
	return p.Era, r
}

// TestServeStdio spawns conduit serve as the stdio server of conduit
// probe, in each era and with a fault.
func TestServeStdio(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		wantEra string
	}{
		{[]string{"serve"}, "modern"},
		{[]string{"serve", "--era", "legacy"}, "legacy"},
		{[]string{"serve", "--era=modern"}, "modern"},
		{[]string{"serve", "--fault", "discover-not-shaped"}, "legacy"},
		{[]string{"serve", "--fault", "rpc-error:code=-32601"}, "legacy"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			era, r := probeEra(t, append([]string{"--"}, append([]string{conduitBin}, tc.args...)...)...)
			if r.code != 0 || era != tc.wantEra {
				t.Errorf("era %q (exit %d), want %q; stdout %s stderr %s", era, r.code, tc.wantEra, r.stdout, r.stderr)
			}
		})
	}
	t.Run("exit fault", func(t *testing.T) {
		r := runConduit(t, "", "call", "echo", "text=hi", "--", conduitBin, "serve", "--fault", "exit:method=tools/call")
		if r.code != exitError || !strings.Contains(r.stderr, "exited with code 3") {
			t.Errorf("call: exit %d, stderr %s; want 1 and the server's exit status 3", r.code, r.stderr)
		}
		r = runConduit(t, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}`+"\n", "serve", "--fault", "exit:method=tools/call")
		if r.code != exitNegotiation || r.stdout != "" || !strings.Contains(r.stderr, "exiting on fault") {
			t.Errorf("serve: exit %d, stdout %q, stderr %q; want 3, nothing, the fault", r.code, r.stdout, r.stderr)
		}
	})
}

// TestServeStdioInterrupt stops a stdio conduit serve whose stdin stays
// open with SIGINT: it exits at once with status 0.
func TestServeStdioInterrupt(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, conduitBin, "serve")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Serving: a ping is answered.
	if _, err := io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("ping: %q, %v", line, err)
	}
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGINT)
	if err := cmd.Wait(); err != nil || time.Since(start) > 5*time.Second {
		t.Errorf("after SIGINT: %v after %v; want exit 0 at once", err, time.Since(start))
	}
}

// startServe starts conduit serve with args as a subprocess and returns
// the URL it printed; the process is interrupted and checked at cleanup.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	// Not t.Context: it ends before the cleanup that interrupts the server.
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	cmd := exec.CommandContext(ctx, conduitBin, append([]string{"serve"}, args...)...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer cancel()
		_ = cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Errorf("conduit serve %v: %v; stderr %s", args, err, stderr.String())
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("no URL from conduit serve: %v; stderr %s", err, stderr.String())
	}
	url := strings.TrimSpace(line)
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("printed %q, want http://127.0.0.1:PORT/mcp", url)
	}
	return url
}

// TestServeHTTP serves over HTTP in a subprocess and probes it over
// Streamable HTTP and WebSocket.
func TestServeHTTP(t *testing.T) {
	url := startServe(t, "--http", "--era", "legacy")
	if era, r := probeEra(t, url); era != "legacy" {
		t.Errorf("era %q over HTTP; stdout %s stderr %s", era, r.stdout, r.stderr)
	}
	url = startServe(t, "--http", "127.0.0.1:0", "--era", "modern")
	ws := "ws" + strings.TrimSuffix(strings.TrimPrefix(url, "http"), "/mcp") + "/ws"
	if era, r := probeEra(t, ws); era != "modern" {
		t.Errorf("era %q over WebSocket; stdout %s stderr %s", era, r.stdout, r.stderr)
	}
	url = startServe(t, "--http=127.0.0.1:0", "--fault", "http-status:status=401,header=WWW-Authenticate=Bearer")
	if r := runConduit(t, "", "probe", url); r.code != exitNegotiation {
		t.Errorf("probe of a 401 server: exit %d, stderr %s", r.code, r.stderr)
	}
}

func TestServeUsage(t *testing.T) {
	for _, args := range [][]string{
		{"serve", "--fault", "no-such-fault"},
		{"serve", "--era", "ancient"},
		{"serve", "--http", "0.0.0.0:0"},
		{"serve", "stray"},
		{"serve", "--replay", "x.jsonl", "--fault", "silent"},
	} {
		if r := runConduit(t, "", args...); r.code != exitUsage || !strings.Contains(r.stderr, "conduit serve:") {
			t.Errorf("conduit %v: exit %d, stderr %q; want a usage error", args, r.code, r.stderr)
		}
	}
}

// TestServeListFaults prints the table of package conduittest.
func TestServeListFaults(t *testing.T) {
	r := runConduit(t, "", "serve", "--list-faults")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	lines := strings.Split(r.stdout, "\n")
	for i, f := range conduittest.Faults() {
		if name, desc, _ := strings.Cut(lines[i], " "); name != string(f.Fault) || strings.TrimSpace(desc) != f.Description {
			t.Errorf("line %d = %q, want %s and %q", i, lines[i], f.Fault, f.Description)
		}
	}
	for _, p := range conduittest.ProbeOutcomes() {
		if !strings.Contains(r.stdout, p.Outcome+" → "+p.Verdict) {
			t.Errorf("--list-faults lacks the probe outcome %q", p.Outcome)
		}
	}
}

// TestRecordReplay records a conduit session with --record and replays it
// with conduit serve --replay, over stdio and HTTP.
func TestRecordReplay(t *testing.T) {
	for _, era := range []string{"modern", "legacy"} {
		t.Run(era, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "session.jsonl")
			rec := runConduit(t, "", "call", "--record", file, "echo", "text=hi", "--", conduitBin, "serve", "--era", era)
			if rec.code != 0 || strings.TrimSpace(rec.stdout) != "hi" {
				t.Fatalf("recording: exit %d, stdout %q, stderr %s", rec.code, rec.stdout, rec.stderr)
			}
			if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), `"dir":"send"`) {
				t.Fatalf("transcript %q, %v", b, err)
			}
			r := runConduit(t, "", "call", "echo", "text=hi", "--", conduitBin, "serve", "--replay", file)
			if r.code != 0 || r.stdout != rec.stdout {
				t.Errorf("replay over stdio: exit %d, stdout %q, want %q; stderr %s", r.code, r.stdout, rec.stdout, r.stderr)
			}
			r = runConduit(t, "", "call", "echo", "text=bye", "--", conduitBin, "serve", "--replay", file)
			if r.code != exitError || !strings.Contains(r.stderr, "-32099") {
				t.Errorf("unrecorded call: exit %d, stderr %s; want exit 1 and -32099", r.code, r.stderr)
			}
			url := startServe(t, "--replay", file, "--http")
			if r := runConduit(t, "", "call", url, "echo", "text=hi"); r.code != 0 || r.stdout != rec.stdout {
				t.Errorf("replay over HTTP: exit %d, stdout %q; stderr %s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestServeStdioRawOutput checks that conduit serve's stdout, a JSON-RPC
// stream and no terminal, carries the server's answers unaltered: an
// echoed DEL stays valid JSON.
func TestServeStdioRawOutput(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\u007fb"}}}
`
	r := runConduit(t, in, "serve", "--era", "legacy")
	var found bool
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var msg struct {
			ID     int
			Result struct{ Content []struct{ Text string } }
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("conduit serve wrote a line that is not JSON: %v:\n%q", err, line)
		}
		if msg.ID == 2 {
			found = len(msg.Result.Content) > 0 && strings.Contains(msg.Result.Content[0].Text, "a\x7fb")
		}
	}
	if !found {
		t.Errorf("conduit serve: no echo of the text with its DEL in:\n%q\nstderr: %s", r.stdout, r.stderr)
	}
}
