package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// decodeJSON parses a run's stdout as one JSON object.
func decodeJSON(t *testing.T, r result, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.stdout), v); err != nil {
		t.Fatalf("stdout is not one JSON value: %v\nstdout:\n%s\nstderr:\n%s", err, r.stdout, r.stderr)
	}
}

func TestProbeJSON(t *testing.T) {
	for _, era := range eras {
		for _, tr := range transports {
			t.Run(era+"/"+tr, func(t *testing.T) {
				t.Parallel()
				s := startServer(t, tr, era, testserver.Options{})
				r := runConduit(t, "", s.args([]string{"probe", "--json"})...)
				if r.code != 0 {
					t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
				}
				var got struct {
					Era             string                      `json:"era"`
					ProtocolVersion string                      `json:"protocolVersion"`
					Transport       string                      `json:"transport"`
					ServerInfo      protocol.Implementation     `json:"serverInfo"`
					Capabilities    protocol.ServerCapabilities `json:"capabilities"`
					Trace           []traceJSON                 `json:"trace"`
					Error           json.RawMessage             `json:"error"`
				}
				decodeJSON(t, r, &got)
				wantVersion := protocol.Version20260728
				if era == "legacy" {
					wantVersion = protocol.Version20251125
				}
				if got.Era != era || got.ProtocolVersion != wantVersion || got.Transport != tr {
					t.Errorf("era, version, transport = %q, %q, %q; want %q, %q, %q", got.Era, got.ProtocolVersion, got.Transport, era, wantVersion, tr)
				}
				if got.ServerInfo.Name != "conduit-testserver" {
					t.Errorf("serverInfo.name = %q", got.ServerInfo.Name)
				}
				if got.Capabilities.Tools == nil || got.Capabilities.Resources == nil {
					t.Errorf("capabilities lack tools or resources: %+v", got.Capabilities)
				}
				if len(got.Trace) == 0 || got.Trace[len(got.Trace)-1].Verdict != era {
					t.Errorf("trace = %+v, want steps ending in verdict %q", got.Trace, era)
				}
				if got.Error != nil {
					t.Errorf("error = %s on success", got.Error)
				}
			})
		}
	}
}

// TestProbeFailure checks failed negotiations: exit status 3, the error
// kind, and the trace of the failed attempt.
func TestProbeFailure(t *testing.T) {
	tests := []struct {
		name      string
		transport string
		era       string
		protocol  string
		opts      testserver.Options
		flags     []string
		wantKind  string
	}{
		{name: "modern-only client, legacy stdio server", transport: "stdio", era: "legacy", protocol: "modern", wantKind: "negotiation"},
		{name: "modern-only client, legacy HTTP server", transport: "http", era: "legacy", protocol: "modern", wantKind: "negotiation"},
		{name: "legacy-only client, modern WebSocket server", transport: "websocket", era: "modern", protocol: "legacy", wantKind: "negotiation"},
		{name: "HTTP 401", transport: "http", era: "modern", protocol: "auto", wantKind: "auth",
			opts: testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultHTTPStatus, Method: "*", Status: 401}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startServer(t, tc.transport, tc.era, tc.opts, tc.flags...)
			r := runConduit(t, "", s.args([]string{"probe", "--json", "--timeout", "30s", "--protocol", tc.protocol})...)
			if r.code != exitNegotiation {
				t.Errorf("exit status %d, want %d; stderr:\n%s", r.code, exitNegotiation, r.stderr)
			}
			var got struct {
				Era   string      `json:"era"`
				Trace []traceJSON `json:"trace"`
				Error struct {
					Kind    string `json:"kind"`
					Message string `json:"message"`
				} `json:"error"`
			}
			decodeJSON(t, r, &got)
			if got.Error.Kind != tc.wantKind || got.Error.Message == "" {
				t.Errorf("error = %+v, want kind %q and a message", got.Error, tc.wantKind)
			}
			if got.Era != "" {
				t.Errorf("era = %q on failure", got.Era)
			}
			if len(got.Trace) == 0 {
				t.Errorf("no trace on failure")
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); !strings.HasPrefix(r.stderr, "conduit: ") || n != 0 {
				t.Errorf("stderr is not one line starting with \"conduit: \":\n%s", r.stderr)
			}
		})
	}
}

func TestListJSON(t *testing.T) {
	s := startServer(t, "http", "modern", testserver.Options{})
	tests := []struct {
		cmd, key string
		want     string // one name or URI the list must hold
	}{
		{"tools", "tools", "add"},
		{"prompts", "prompts", "greet"},
		{"resources", "resources", "file:///hello.txt"},
		{"templates", "resourceTemplates", "file:///{path}"},
	}
	for _, tc := range tests {
		t.Run(tc.cmd, func(t *testing.T) {
			r := runConduit(t, "", s.args([]string{tc.cmd, "--json"})...)
			if r.code != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			var got map[string][]map[string]any
			decodeJSON(t, r, &got)
			found := false
			for _, item := range got[tc.key] {
				for _, k := range []string{"name", "uri", "uriTemplate"} {
					if item[k] == tc.want {
						found = true
					}
				}
			}
			if !found {
				t.Errorf("%s: %q not in %v", tc.key, tc.want, got)
			}
		})
	}
}

// TestToolsDropped: on modern Streamable HTTP the tools with invalid
// x-mcp-header annotations are left out of the list, and conduit tools
// says which and why, in the text and in --json; over stdio nothing is
// dropped (and --json says so with []).
func TestToolsDropped(t *testing.T) {
	for _, tc := range []struct {
		transport string
		want      []string
	}{
		{"http", []string{"bad_header_name", "bad_header_type"}},
		{"stdio", nil},
	} {
		t.Run(tc.transport, func(t *testing.T) {
			s := startServer(t, tc.transport, "modern", testserver.Options{})
			r := runConduit(t, "", s.args([]string{"tools", "--json"})...)
			var got struct {
				Dropped []struct{ Name, Reason string } `json:"dropped"`
			}
			decodeJSON(t, r, &got)
			var names []string
			for _, d := range got.Dropped {
				names = append(names, d.Name)
				if !strings.Contains(d.Reason, "x-mcp-header") {
					t.Errorf("dropped %s: reason %q does not say what is wrong", d.Name, d.Reason)
				}
			}
			if !slices.Equal(names, tc.want) || !strings.Contains(r.stdout, `"dropped": [`) {
				t.Errorf("--json dropped %v, want %v (stdout %s)", names, tc.want, r.stdout)
			}
			text := runConduit(t, "", s.args([]string{"tools"})...)
			for _, name := range tc.want {
				if !strings.Contains(text.stdout, "\n"+name+" ") {
					t.Errorf("conduit tools does not list the dropped %s:\n%s", name, text.stdout)
				}
			}
			if (len(tc.want) > 0) != strings.Contains(text.stdout, "Left out") {
				t.Errorf("conduit tools over %s:\n%s", tc.transport, text.stdout)
			}
		})
	}
}

func TestCallJSON(t *testing.T) {
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, "stdio", era, testserver.Options{})
			r := runConduit(t, "", s.args([]string{"call", "--json"}, "add", "a=2", "b:=40")...)
			if r.code != 0 {
				t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			var got protocol.CallToolResult
			decodeJSON(t, r, &got)
			var compact bytes.Buffer
			json.Compact(&compact, got.StructuredContent)
			if diff := cmp.Diff(`{"sum":42}`, compact.String()); diff != "" {
				t.Errorf("structuredContent (-want +got):\n%s", diff)
			}
			r = runConduit(t, "", s.args([]string{"call", "--json"}, "fail")...)
			if r.code != exitToolError {
				t.Errorf("isError call: exit status %d, want %d", r.code, exitToolError)
			}
			decodeJSON(t, r, &got)
			if got.IsError == nil || !*got.IsError {
				t.Errorf("isError call: result %+v lacks isError", got)
			}
		})
	}
}

// repeatOutput is call --repeat --json.
type repeatOutput struct {
	CallsOK         int             `json:"calls_ok"`
	CallsFailed     int             `json:"calls_failed"`
	Era             string          `json:"era"`
	ProtocolVersion string          `json:"protocolVersion"`
	Reconnects      int             `json:"reconnects"`
	Error           json.RawMessage `json:"error"`
}

func TestRepeat(t *testing.T) {
	for _, era := range eras {
		for _, tr := range transports {
			t.Run(era+"/"+tr, func(t *testing.T) {
				t.Parallel()
				s := startServer(t, tr, era, testserver.Options{})
				r := runConduit(t, "", s.args([]string{"call", "--json", "--repeat", "20", "--concurrency", "4"}, "echo", "text=hi")...)
				if r.code != 0 {
					t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
				}
				var got repeatOutput
				decodeJSON(t, r, &got)
				if got.CallsOK != 20 || got.CallsFailed != 0 || got.Era != era || string(got.Error) != "null" || got.Reconnects != 0 {
					t.Errorf("summary = %+v, want 20 ok, 0 failed, era %s, no reconnects, error null", got, era)
				}
			})
		}
	}
}

// TestRepeatSelfHealing shows the SDK healing under call --repeat: the
// stdio server exits in the middle of the run (and is respawned), or the
// legacy HTTP session expires (and is re-initialized). The call lost with
// the stdio server may have run, so by default (--replay safe) it fails
// with an unknown outcome and the next calls succeed; with --replay all
// every call succeeds. The legacy HTTP session's call never ran, so every
// call succeeds.
func TestRepeatSelfHealing(t *testing.T) {
	t.Run("stdio server exits", func(t *testing.T) {
		for _, era := range eras {
			for _, replay := range []string{"safe", "all"} {
				t.Run(era+"/"+replay, func(t *testing.T) {
					marker := filepath.Join(t.TempDir(), "exited")
					s := startServer(t, "stdio", era, testserver.Options{}, "-fault", "exit:method=tools/call,skip=2", "-exit-marker", marker)
					r := runConduit(t, "", s.args([]string{"call", "--json", "--repeat", "5", "--replay", replay}, "echo", "text=hi")...)
					var got repeatOutput
					decodeJSON(t, r, &got)
					if replay == "all" && (r.code != 0 || got.CallsOK != 5 || got.CallsFailed != 0 || got.Reconnects != 1) {
						t.Errorf("exit status %d, summary %+v; want 0, 5 ok, 1 reconnect; stderr:\n%s", r.code, got, r.stderr)
					}
					if replay == "safe" && (r.code == 0 || got.CallsOK != 4 || got.CallsFailed != 1 || got.Reconnects != 1 ||
						!strings.Contains(r.stderr, "outcome unknown")) {
						t.Errorf("exit status %d, summary %+v; want a failure, 4 ok, 1 failed with an unknown outcome, 1 reconnect; stderr:\n%s", r.code, got, r.stderr)
					}
					if _, err := os.Stat(marker); err != nil {
						t.Errorf("the server never exited (no marker): %v", err)
					}
				})
			}
		}
	})
	t.Run("legacy HTTP session expires", func(t *testing.T) {
		s := startServer(t, "http", "legacy", testserver.Options{Faults: []testserver.Fault{
			{Kind: testserver.FaultExpireSession, Method: "tools/call", Skip: 2, Times: 1},
		}})
		r := runConduit(t, "", s.args([]string{"call", "--json", "--repeat", "5"}, "echo", "text=hi")...)
		var got repeatOutput
		decodeJSON(t, r, &got)
		if r.code != 0 || got.CallsOK != 5 || got.Era != "legacy" || got.Reconnects != 1 {
			t.Errorf("exit status %d, summary %+v; want 0, 5 ok, 1 reconnect; stderr:\n%s", r.code, got, r.stderr)
		}
		inits := 0
		for _, m := range s.srv.ReceivedMethods() {
			if m == "initialize" {
				inits++
			}
		}
		if inits < 2 {
			t.Errorf("initialize received %d times, want a re-initialization after the expiry", inits)
		}
	})
	t.Run("failures are counted", func(t *testing.T) {
		s := startServer(t, "http", "modern", testserver.Options{})
		r := runConduit(t, "", s.args([]string{"call", "--json", "--repeat", "3"}, "fail")...)
		var got struct {
			repeatOutput
			Err struct {
				Kind string `json:"kind"`
			} `json:"error"`
		}
		decodeJSON(t, r, &got)
		if r.code != exitError || got.CallsFailed != 3 || got.Err.Kind != "tool-error" {
			t.Errorf("exit status %d, summary %+v; want %d, 3 failed, kind tool-error", r.code, got, exitError)
		}
	})
}

func TestSamplingCommand(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "llm.sh")
	reqFile := filepath.Join(dir, "request.json")
	body := "#!/bin/sh\ncat > '" + reqFile + "'\n" +
		`echo '{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"fake-llm"}'` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, era := range eras {
		t.Run(era, func(t *testing.T) {
			s := startServer(t, "stdio", era, testserver.Options{})
			r := runConduit(t, "", s.args([]string{"call", "--sampling-command", script}, "sample", "prompt=Capital of France?")...)
			if r.code != 0 || strings.TrimSpace(r.stdout) != "fake-llm said: Paris" {
				t.Errorf("exit status %d, stdout %q; stderr:\n%s", r.code, r.stdout, r.stderr)
			}
			raw, err := os.ReadFile(reqFile)
			if err != nil {
				t.Fatal(err)
			}
			var p protocol.CreateMessageParams
			if err := json.Unmarshal(raw, &p); err != nil || len(p.Messages) != 1 || !strings.Contains(string(p.Messages[0].Content), "Capital of France?") {
				t.Errorf("the command got %s (err %v), want the CreateMessageParams", raw, err)
			}
		})
	}
	t.Run("bad output", func(t *testing.T) {
		s := startServer(t, "stdio", "legacy", testserver.Options{})
		r := runConduit(t, "", s.args([]string{"call", "--sampling-command", "echo not-json"}, "sample")...)
		if r.code != exitError || !strings.Contains(r.stderr, "CreateMessageResult") {
			t.Errorf("exit status %d, stderr %q; want 1 and a message about the output", r.code, r.stderr)
		}
	})
}

// TestProgress checks the plain progress lines of a non-terminal stderr.
// Only the first line is required: the SDK may deliver the progress of the
// last step after the call returned, when conduit has already finished.
func TestProgress(t *testing.T) {
	for _, tr := range transports {
		for _, era := range eras {
			t.Run(era+"/"+tr, func(t *testing.T) {
				t.Parallel()
				s := startServer(t, tr, era, testserver.Options{})
				r := runConduit(t, "", s.args([]string{"call"}, "slow", "steps=3", "delayMs=100")...)
				if r.code != 0 {
					t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
				}
				want := []string{"progress: 1/3 (33%) step 1 of 3", "progress: 2/3 (66%) step 2 of 3", "progress: 3/3 (100%) step 3 of 3"}
				got := strings.Split(strings.TrimSpace(r.stderr), "\n")
				if len(got) == 0 || len(got) > 3 {
					t.Fatalf("progress lines:\n%s", r.stderr)
				}
				if diff := cmp.Diff(want[:len(got)], got); diff != "" {
					t.Errorf("progress lines (-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, "unknown command"},
		{[]string{"call"}, "name the tool"},
		// The tool after "--" went to the server: say where it goes.
		{[]string{"call", "--record", "f", "--", "server", "--flag", "echo", "text=hi"}, `name the tool to call before "--"`},
		{[]string{"call", "echo", "text"}, "want key=value"},
		{[]string{"call", "echo", "{not json"}, "not a JSON object"},
		{[]string{"call", "--concurrency", "3", "echo"}, "--concurrency needs --repeat"},
		{[]string{"probe", "--protocol", "newest"}, "--protocol"},
		{[]string{"probe", "--protocol", "2024-10-07"}, "not a version conduit speaks"}, // 2024-11-05 is spoken: the CLI turns the older versions on
		{[]string{"probe", "--header", "nocolon"}, "NAME:VALUE"},
		{[]string{"probe", "--bogus"}, "flag provided but not defined"},
		{[]string{"probe", "ftp://example.com"}, "unexpected argument"},
		{[]string{"read"}, "one resource URI"},
		{[]string{"complete", "name", "al"}, "--prompt NAME or --resource"},
		{[]string{"tools", "--"}, "nothing after --"},
		{[]string{"tools", "--timeout", "-1s"}, "must not be negative"},
		{[]string{"tools", "--header", "A:b", "--", "server"}, "--header needs"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			r := runConduit(t, "", tc.args...)
			if r.code != exitUsage || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit status %d, stderr %q; want %d and %q", r.code, r.stderr, exitUsage, tc.want)
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
				t.Errorf("the error is not one line:\n%s", r.stderr)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	r := runConduit(t, "", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "Exit status:") || !strings.Contains(r.stdout, "130") {
		t.Errorf("conduit help: exit %d, stdout:\n%s", r.code, r.stdout)
	}
	for _, c := range commands {
		if c == helpCommand {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			r := runConduit(t, "", c.name, "-h")
			if r.code != 0 {
				t.Errorf("exit status %d; stderr:\n%s", r.code, r.stderr)
			}
			wants := []string{"Usage: conduit", "Examples:", "Exit status:", "--json", "--protocol"}
			if c.main != nil {
				// serve takes no client flags; its own must be documented.
				wants = []string{"Usage: conduit", "Examples:", "Exit status:", "--http", "--era", "--fault", "--list-faults", "--replay"}
			}
			for _, want := range wants {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("help lacks %q:\n%s", want, r.stdout)
				}
			}
			if c.output != "" && !strings.Contains(r.stdout, "JSON output") {
				t.Errorf("help does not document the JSON output")
			}
		})
	}
}

// TestInterrupt sends SIGINT while a slow call runs against a stdio
// server: conduit cancels the call, stops the server and exits 130.
func TestInterrupt(t *testing.T) {
	skipWithoutSignals(t)
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	s := startServer(t, "stdio", "modern", testserver.Options{})
	cmd := exec.CommandContext(ctx, conduitBin, s.args([]string{"call"}, "slow", "steps=1000", "delayMs=20")...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(stderr)
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "progress: ") {
		t.Fatalf("first stderr line %q, %v; want progress", line, err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(br)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != exitInterrupted {
		t.Fatalf("wait: %v, want exit status %d; stderr:\n%s", err, exitInterrupted, rest)
	}
	if !strings.Contains(string(rest), "conduit: interrupted") {
		t.Errorf("stderr lacks the interruption:\n%s", rest)
	}
}

// TestListen subscribes with conduit listen and checks that list changes
// and resource updates are printed, and that Ctrl-C ends it with status 0.
func TestListen(t *testing.T) {
	skipWithoutSignals(t)
	for _, era := range eras {
		for _, tr := range []string{"http", "websocket"} {
			t.Run(era+"/"+tr+"/json", func(t *testing.T) {
				s := startServer(t, tr, era, testserver.Options{})
				ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
				defer cancel()
				cmd := exec.CommandContext(ctx, conduitBin, s.args([]string{"listen", "--json", "--uri", "file:///hello.txt"})...)
				stdout, err := cmd.StdoutPipe()
				if err != nil {
					t.Fatal(err)
				}
				stderr, err := cmd.StderrPipe()
				if err != nil {
					t.Fatal(err)
				}
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				errLine, err := bufio.NewReader(stderr).ReadString('\n')
				if err != nil || !strings.HasPrefix(errLine, "listening") {
					cmd.Process.Kill()
					cmd.Wait()
					t.Fatalf("first stderr line %q, %v; want listening", errLine, err)
				}
				// Notify until the events arrive: a legacy client may open
				// its notification stream just after subscribing.
				lines := make(chan string)
				go func() {
					defer close(lines)
					sc := bufio.NewScanner(stdout)
					for sc.Scan() {
						lines <- sc.Text()
					}
				}()
				seen := map[string]bool{}
				notify := func() {
					s.srv.NotifyToolsChanged()
					s.srv.NotifyResourceUpdated("file:///hello.txt")
				}
				notify()
				// Re-sent periodically: notifications sent before the
				// client's stream was open are lost by design.
				retry := time.NewTicker(250 * time.Millisecond)
				defer retry.Stop()
				for !seen["tools-list-changed"] || !seen["resource-updated file:///hello.txt"] {
					select {
					case <-retry.C:
						notify()
					case l, ok := <-lines:
						if !ok {
							t.Fatalf("stdout ended; seen %v", seen)
						}
						var ev struct{ Event, URI string }
						if err := json.Unmarshal([]byte(l), &ev); err != nil {
							t.Fatalf("line %q is not JSON: %v", l, err)
						}
						seen[strings.TrimSpace(ev.Event+" "+ev.URI)] = true
					case <-ctx.Done():
						t.Fatalf("no events before the deadline; seen %v", seen)
					}
				}
				if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
					t.Fatal(err)
				}
				for range lines { // drain until conduit exits
				}
				if err := cmd.Wait(); err != nil {
					t.Errorf("listen after Ctrl-C: %v, want exit status 0", err)
				}
			})
		}
	}
}

// TestHeaders checks that --header reaches an HTTP server on every
// request, and that --json reports usage errors as JSON too.
func TestHeaders(t *testing.T) {
	s := startServer(t, "http", "legacy", testserver.Options{})
	r := runConduit(t, "", s.args([]string{"tools", "--header", "X-Team: blue", "--header", "X-Trace:1"})...)
	if r.code != 0 {
		t.Fatalf("exit status %d; stderr:\n%s", r.code, r.stderr)
	}
	recs := s.srv.Received()
	if len(recs) == 0 {
		t.Fatal("the server received nothing")
	}
	for _, rec := range recs {
		if rec.Headers.Get("X-Team") != "blue" || rec.Headers.Get("X-Trace") != "1" {
			t.Errorf("%s: headers %v lack X-Team and X-Trace", rec.Method, rec.Headers)
		}
	}

	r = runConduit(t, "", "call", "--json")
	var got struct{ Error struct{ Kind string } }
	decodeJSON(t, r, &got)
	if r.code != exitUsage || got.Error.Kind != "usage" {
		t.Errorf("usage error with --json: exit %d, %+v", r.code, got)
	}
}

// skipWithoutSignals skips tests that interrupt conduit with SIGINT where
// a process cannot be sent one.
func skipWithoutSignals(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("os.Process.Signal(os.Interrupt) is not implemented on Windows")
	}
}

// TestListenText checks the text form of listen's events.
func TestListenText(t *testing.T) {
	skipWithoutSignals(t)
	s := startServer(t, "http", "modern", testserver.Options{})
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, conduitBin, s.args([]string{"listen"})...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	errLine, err := bufio.NewReader(stderr).ReadString('\n')
	if want := "listening (modern era) for tools, prompts, resources list changes and updates of 3 resources; Ctrl-C to stop\n"; err != nil || errLine != want {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("stderr line %q, %v; want %q", errLine, err, want)
	}
	// A modern subscription is acknowledged before listen says it is
	// listening, so these notifications cannot be lost.
	s.srv.NotifyPromptsChanged()
	s.srv.NotifyResourceUpdated("file:///config.json")
	br := bufio.NewReader(stdout)
	var got []string
	for range 2 {
		l, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("reading events: %v (got %q)", err, got)
		}
		got = append(got, strings.TrimSpace(l))
	}
	if diff := cmp.Diff([]string{"prompts list changed", "resource updated: file:///config.json"}, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	cmd.Process.Signal(syscall.SIGINT)
	io.Copy(io.Discard, br)
	if err := cmd.Wait(); err != nil {
		t.Errorf("listen after Ctrl-C: %v, want exit status 0", err)
	}
}
