//go:build windows

package transport_test

import (
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/conduitmcp/conduit/internal/wintest"
	"github.com/conduitmcp/conduit/transport"
)

// skipUnderWine skips t under Wine, for the reason given.
func skipUnderWine(t testing.TB, reason string) {
	if wintest.UnderWine() {
		t.Skip("under Wine: " + reason)
	}
}

// waitGone waits, bounded, until none of pids runs.
func waitGone(t *testing.T, what string, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		alive := slices.DeleteFunc(slices.Clone(pids), func(p int) bool { return !wintest.Running(p) })
		if len(alive) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: processes %v still run", what, alive)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// treePids connects a "grandchild" server and returns its pid and its
// child's, both checked to run.
func treePids(t *testing.T, c transport.Conn) (server, grandchild int) {
	t.Helper()
	n := readNotification(t, c, "grandchild")
	var p struct{ Pid int }
	if err := json.Unmarshal(n.Params, &p); err != nil || p.Pid <= 0 {
		t.Fatalf("grandchild notification params = %s, %v", n.Params, err)
	}
	t.Cleanup(func() { wintest.Kill(p.Pid) })
	var res struct{ Pid int }
	if err := json.Unmarshal(call(t, c, 1, "pid", nil).Result, &res); err != nil {
		t.Fatal(err)
	}
	if !wintest.Running(p.Pid) || !wintest.Running(res.Pid) {
		t.Fatalf("server %d or grandchild %d does not run before Close", res.Pid, p.Pid)
	}
	return res.Pid, p.Pid
}

// TestWindowsCloseKillsTree: Close ends the server and the grandchild it
// started, though the grandchild holds the server's stdout and stderr and
// the server exits cleanly when its stdin closes. Without the job object
// the grandchild runs on for a minute.
func TestWindowsCloseKillsTree(t *testing.T) {
	c := connect(t, testServer(t, "grandchild"))
	server, grandchild := treePids(t, c)
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v, want nil (the server exited cleanly)", err)
	}
	waitGone(t, "after Close", server, grandchild)
}

// TestWindowsLadderTerminatesJob: a server that ignores its stdin closing
// (and, under Wine, cannot be sent CTRL_BREAK) is ended with its tree by
// terminating the job, within the ladder's delays; Close reports exit
// code 1.
func TestWindowsLadderTerminatesJob(t *testing.T) {
	s := testServer(t, "grandchild-ignore-stdin")
	s.TerminateDelay = 100 * time.Millisecond
	s.KillDelay = 100 * time.Millisecond
	c := connect(t, s)
	server, grandchild := treePids(t, c)
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	ee, ok := errors.AsType[*transport.ExitError](err)
	if !ok || ee.Code != 1 {
		t.Errorf("Close() = %v, want *ExitError with code 1", err)
	}
	if took > testTimeout {
		t.Errorf("Close took %v", took)
	}
	waitGone(t, "after Close", server, grandchild)
}

// TestWindowsCrashThenCloseKillsTree: the server crashes and leaves its
// grandchild; Close (what the session does before it respawns) ends the
// grandchild, and the respawned server is a new process.
func TestWindowsCrashThenCloseKillsTree(t *testing.T) {
	s := testServer(t, "grandchild")
	c := connect(t, s)
	server, grandchild := treePids(t, c)
	if err := c.Write(t.Context(), request(t, 2, "crash", nil)); err != nil {
		t.Fatal(err)
	}
	readNotification(t, c, "bye")
	if ee, ok := errors.AsType[*transport.ExitError](readErr(t, c)); !ok || ee.Code != 3 {
		t.Fatalf("Read() after crash: want *ExitError with code 3")
	}
	if !wintest.Running(grandchild) {
		t.Fatalf("grandchild %d already gone before Close: the test proves nothing", grandchild)
	}
	c.Close()
	waitGone(t, "after Close of the crashed server", server, grandchild)
	c2 := connect(t, s)
	server2, grandchild2 := treePids(t, c2)
	if server2 == server {
		t.Errorf("respawn reached pid %d again", server2)
	}
	c2.Close()
	waitGone(t, "after Close of the respawned server", server2, grandchild2)
}

// TestWindowsCtrlBreak: the ladder's second rung, CTRL_BREAK_EVENT to the
// server's process group, ends a server that ignores its stdin closing.
// Wine does not implement GenerateConsoleCtrlEvent.
func TestWindowsCtrlBreak(t *testing.T) {
	if wintest.UnderWine() {
		t.Skip("Wine does not implement GenerateConsoleCtrlEvent; the rung is proven on Windows only")
	}
	if w, _, _ := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleWindow").Call(); w == 0 {
		t.Skip("this process has no console to share with the server, so CTRL_BREAK_EVENT cannot reach it")
	}
	s := testServer(t, "ignore-stdin")
	s.TerminateDelay = 100 * time.Millisecond
	s.KillDelay = testTimeout
	c := connect(t, s)
	readNotification(t, c, "ready")
	err := c.Close()
	const statusControlCExit = 0xC000013A
	if ee, ok := errors.AsType[*transport.ExitError](err); !ok || uint32(ee.Code) != statusControlCExit {
		t.Errorf("Close() = %v, want *ExitError with code STATUS_CONTROL_C_EXIT", err)
	}
}

// TestWindowsEnvAllowList: Windows' own variables are passed whatever
// the case of their names, secrets are not, and an explicit entry
// overrides an inherited one of another case.
func TestWindowsEnvAllowList(t *testing.T) {
	t.Setenv("CONDUIT_TEST_SECRET", "hunter2")
	for _, kv := range []string{"SystemRoot", "APPDATA", "LOCALAPPDATA", "ProgramFiles", "PATHEXT", "ComSpec", "USERPROFILE", "TEMP"} {
		if os.Getenv(kv) == "" {
			t.Setenv(kv, `C:\conduit-test`)
		}
	}
	s := testServer(t, "echo")
	s.Env = append(s.Env, "path=C:\\conduit-explicit")
	c := connect(t, s)
	get := func(name string) (string, bool) {
		var res struct {
			Value string
			Set   bool
		}
		if err := json.Unmarshal(call(t, c, 1, "getenv", map[string]string{"name": name}).Result, &res); err != nil {
			t.Fatal(err)
		}
		return res.Value, res.Set
	}
	for _, name := range []string{"SYSTEMROOT", "systemroot", "APPDATA", "LocalAppData", "PROGRAMFILES", "PATHEXT", "COMSPEC", "UserProfile", "TEMP"} {
		if v, ok := get(name); !ok || v != os.Getenv(name) {
			t.Errorf("server's %s = %q, %v; want %q", name, v, ok, os.Getenv(name))
		}
	}
	if _, ok := get("CONDUIT_TEST_SECRET"); ok {
		t.Error("the secret reached the server")
	}
	if v, _ := get("PATH"); v != `C:\conduit-explicit` {
		t.Errorf("server's PATH = %q, want the explicit one", v)
	}
}

// TestWindowsBatchResolution: a name without extension found as a .cmd
// file in PATH (the way npx resolves to npx.cmd) runs through cmd.exe,
// and arguments with cmd.exe's operators, variables, quotes and spaces
// reach the program the batch file starts unchanged.
func TestWindowsBatchResolution(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := wintest.TempDir(t)
	script := "@echo off\r\n\"" + exe + "\" %*\r\n"
	if err := os.WriteFile(filepath.Join(dir, "fakenpx.cmd"), []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	// cmd.exe's operators, delayed expansion, spaces, backslashes and
	// the empty argument.
	args := []string{"-y", "plain", "two words", "a&echo INJECTED", "x|y", "<in>", "^caret", "!bang!", `back\slash\`, `C:\dir\`, "(paren)", ""}
	if !wintest.UnderWine() {
		// Variables and quotes: Wine's cmd.exe expands %% and splits
		// doubled quotes unlike Windows' (the escapes are those Windows'
		// cmd.exe documents and Rust's standard library relies on), so
		// these are proven on Windows only.
		args = append(args, "%PATH%", "100%", `quo"te`, `"`, `a\"b`)
	}
	s := transport.Command("fakenpx", args...)
	s.Env = []string{serverEnv + "=echo", "GORACE=atexit_sleep_ms=0"}
	c := connect(t, s)
	var res struct{ Args []string }
	if err := json.Unmarshal(call(t, c, 1, "args", nil).Result, &res); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Args, args) {
		t.Errorf("the server got args\n%q\nwant\n%q", res.Args, args)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	_, err = transport.Command("fakenpx", "line\nbreak").Connect(t.Context())
	if err == nil || !strings.Contains(err.Error(), "line break") {
		t.Errorf("Connect with a line break in an argument = %v, want the refusal", err)
	}
}

// TestWindowsWithoutJob: where the server cannot be put in a job (the
// host's job forbids it; the refusal is simulated, as Wine nests jobs),
// servers still run, the limitation is logged once for two servers, and
// Close still ends the server's own process.
func TestWindowsWithoutJob(t *testing.T) {
	t.Cleanup(transport.RefuseJobs())
	var logs lockedBuffer
	for i := range 2 {
		s := testServer(t, "echo")
		s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
		c := connect(t, s)
		var res struct{ Pid int }
		if err := json.Unmarshal(call(t, c, int64(i), "pid", nil).Result, &res); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
		waitGone(t, "after Close", res.Pid)
	}
	if n := strings.Count(logs.String(), "cannot put the server in a job object"); n != 1 {
		t.Errorf("the limitation was logged %d times, want once:\n%s", n, logs.String())
	}
}
