//go:build windows

package engine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/conduitmcp/conduit/protocol"
)

// stateDir is t.TempDir that Wine can clean up: os.RemoveAll fails under
// Wine 8, so the files are removed one by one.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "conduit-engine-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			os.Remove(filepath.Join(dir, e.Name()))
		}
		os.Remove(dir)
	})
	return dir
}

// The stdio server of these tests starts a grandchild when
// grandchildPidsEnv names a file: before TestMain runs it as a server, it
// starts the test binary again with sleepEnv set (that process sleeps a
// minute) and appends the grandchild's pid to the file.
const (
	grandchildPidsEnv = "CONDUIT_ENGINE_TEST_GRANDCHILD_PIDS"
	sleepEnv          = "CONDUIT_ENGINE_TEST_SLEEP"
)

func init() {
	if os.Getenv(sleepEnv) != "" {
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	pids := os.Getenv(grandchildPidsEnv)
	if pids == "" || os.Getenv(stdioServerEnv) == "" {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		os.Exit(2)
	}
	gc := exec.Command(exe)
	gc.Env = []string{sleepEnv + "=1"}
	if err := gc.Start(); err != nil {
		os.Exit(2)
	}
	f, err := os.OpenFile(pids, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		os.Exit(2)
	}
	fmt.Fprintln(f, gc.Process.Pid)
	f.Close()
}

// running reports whether process pid still runs.
func running(pid int) bool {
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return false
	}
	defer windows.CloseHandle(h)
	ev, err := windows.WaitForSingleObject(h, 0)
	return err == nil && ev == uint32(windows.WAIT_TIMEOUT)
}

// grandchildren reads the pids the servers wrote.
func grandchildren(t *testing.T, file string) []int {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("grandchild pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatal(err)
		}
		pids = append(pids, pid)
		t.Cleanup(func() {
			if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid)); err == nil {
				windows.TerminateProcess(h, 1)
				windows.CloseHandle(h)
			}
		})
	}
	return pids
}

// waitGone waits, bounded, until pid no longer runs.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); running(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: process %d still runs", what, pid)
		}
	}
}

// TestWindowsRespawnEndsTree: a real server process tree (the server and
// a grandchild it started) crashes mid-call; the session respawns the
// server and replays the call, and the first tree is gone by then, the
// grandchild included. Closing the session ends the second tree.
func TestWindowsRespawnEndsTree(t *testing.T) {
	pidFile := filepath.Join(stateDir(t), "pids")
	tr := stdioServer(t)
	tr.Env = append(tr.Env, grandchildPidsEnv+"="+pidFile)
	s := connected(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll})
	first := grandchildren(t, pidFile)
	if len(first) != 1 || !running(first[0]) {
		t.Fatalf("before the crash: grandchildren %v, want one running", first)
	}
	res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "crash"}, nil)
	if err != nil || string(res) != `{"echo":{"name":"crash"}}` {
		t.Fatalf("Call = %s, %v; want the replayed echo", res, err)
	}
	waitGone(t, "the crashed server's grandchild after the respawn", first[0])
	all := grandchildren(t, pidFile)
	if len(all) != 2 || !running(all[1]) {
		t.Fatalf("after the respawn: grandchildren %v, want a second one running", all)
	}
	s.Close()
	waitGone(t, "the respawned server's grandchild after Close", all[1])
}
