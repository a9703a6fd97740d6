// Package foreign starts the foreign MCP servers of the interop tests and
// benchmarks (see package servers): as stdio command lines, or as HTTP
// processes bound to 127.0.0.1 on a port of their choosing, whose URL it
// reads from their output. Every process it starts is stopped by the
// test's Cleanup.
package foreign

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/testenv"
)

// Kind names a foreign server implementation.
type Kind string

// The foreign servers.
const (
	GoSDK      Kind = "go-sdk"            // servers/goserver
	MCPGo      Kind = "mcp-go"            // servers/mcpgoserver
	TS         Kind = "ts-sdk-v2"         // servers/ts/server.mjs
	Everything Kind = "server-everything" // @modelcontextprotocol/server-everything
	Raw        Kind = "raw"               // servers/rawserver (stdio only)
)

// Transport names how a server is reached.
type Transport string

// Transports.
const (
	Stdio Transport = "stdio"
	HTTP  Transport = "http" // Streamable HTTP
	SSE   Transport = "sse"  // legacy HTTP+SSE (server-everything only)
	// WebSocket is one JSON-RPC message per WebSocket text message
	// (rawserver only); StartHTTP returns its http:// URL, which a
	// WebSocket client dials as ws://.
	WebSocket Transport = "ws"
)

// Options are the server flags shared by the Go and TS servers.
type Options struct {
	Mode  string // dual (default), modern or legacy
	Tools int    // extra filler tools
}

// Command returns the argv of server k over stdio.
func Command(t testing.TB, k Kind, o Options) []string {
	t.Helper()
	switch k {
	case GoSDK, MCPGo, Raw:
		bin := testenv.Build(t, "./servers/"+map[Kind]string{GoSDK: "goserver", MCPGo: "mcpgoserver", Raw: "rawserver"}[k])
		return append([]string{bin, "-transport", "stdio"}, o.flags("-")...)
	case TS:
		return append([]string{testenv.Node(t), filepath.Join(testenv.MustRoot(t), "servers", "ts", "server.mjs"), "--transport", "stdio"}, o.flags("--")...)
	case Everything:
		return []string{testenv.Node(t), filepath.Join(testenv.NodeModule(t, "@modelcontextprotocol/server-everything"), "dist", "index.js"), "stdio"}
	}
	t.Fatalf("foreign: unknown server %q", k)
	return nil
}

func (o Options) flags(dash string) []string {
	var f []string
	if o.Mode != "" {
		f = append(f, dash+"mode", o.Mode)
	}
	if o.Tools > 0 {
		f = append(f, dash+"tools", fmt.Sprint(o.Tools))
	}
	return f
}

var (
	urlLine      = regexp.MustCompile(`^http://127\.0\.0\.1:\d+/mcp$`)
	announceLine = regexp.MustCompile(`bind-localhost: listening on 127\.0\.0\.1:(\d+)`)
)

// startTimeout bounds how long a server may take to print its address.
const startTimeout = 30 * time.Second

// StartHTTP starts server k over tr (HTTP or SSE) and returns its endpoint
// URL. The process is stopped when t ends.
func StartHTTP(t testing.TB, k Kind, tr Transport, o Options) string {
	t.Helper()
	argv, env, announce := httpCommand(t, k, tr, o)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", k, err)
	}
	waited := make(chan struct{})
	found := make(chan string, 2)
	scan := func(r io.Reader, prefix string) {
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			switch {
			case !announce && urlLine.MatchString(line):
				offer(found, line)
			case announce:
				if m := announceLine.FindStringSubmatch(line); m != nil {
					path := "/mcp"
					if tr == SSE {
						path = "/sse"
					}
					offer(found, "http://127.0.0.1:"+m[1]+path)
				}
			}
			if testing.Verbose() {
				t.Logf("%s %s: %s", k, prefix, line)
			}
		}
	}
	done := make(chan struct{}, 2)
	go func() { scan(stdout, "stdout"); done <- struct{}{} }()
	go func() { scan(stderr, "stderr"); done <- struct{}{} }()
	exited := make(chan error, 1)
	go func() {
		<-done
		<-done
		exited <- cmd.Wait()
		close(waited)
	}()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-waited:
		case <-time.After(5 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-waited
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	select {
	case u := <-found:
		return u
	case err := <-exited:
		exited <- err
		t.Fatalf("%s exited before printing its address: %v", k, err)
	case <-ctx.Done():
		t.Fatalf("%s did not print its address within %v", k, startTimeout)
	}
	return ""
}

// httpCommand returns the argv and extra environment of server k over tr,
// and whether it announces its port (the Node servers) rather than
// printing its URL.
func httpCommand(t testing.TB, k Kind, tr Transport, o Options) (argv, env []string, announce bool) {
	t.Helper()
	switch k {
	case GoSDK, MCPGo, Raw:
		argv = Command(t, k, o)
		argv[2] = "http"
		if tr == WebSocket {
			argv[2] = "ws"
		}
		argv = append(argv, "-addr", "127.0.0.1:0")
	case TS:
		argv = Command(t, k, o)
		argv[3] = "http"
		argv = append(argv, "--addr", "127.0.0.1:0")
	case Everything:
		mode := "streamableHttp"
		if tr == SSE {
			mode = "sse"
		}
		argv = Command(t, k, o)
		argv[len(argv)-1] = mode
		env = []string{"PORT=0", "BIND_LOCALHOST_ANNOUNCE=1", "NODE_OPTIONS=" + testenv.BindLocalhost(t)}
		announce = true
	default:
		t.Fatalf("foreign: %s has no HTTP transport", k)
	}
	if tr == SSE && k != Everything {
		t.Fatalf("foreign: only %s serves HTTP+SSE", Everything)
	}
	if tr == WebSocket && k != Raw {
		t.Fatalf("foreign: only %s serves WebSocket", Raw)
	}
	return argv, env, announce
}

// offer sends s on ch unless ch is full (only the first address counts).
func offer(ch chan<- string, s string) {
	select {
	case ch <- s:
	default:
	}
}
