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

	"github.com/conduitmcp/conduit/internal/wintest"
	"github.com/conduitmcp/conduit/protocol"
)

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
		t.Cleanup(func() { wintest.Kill(pid) })
	}
	return pids
}

// waitGone waits, bounded, until pid no longer runs.
func waitGone(t *testing.T, what string, pid int) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); wintest.Running(pid); time.Sleep(10 * time.Millisecond) {
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
	pidFile := filepath.Join(wintest.TempDir(t), "pids")
	tr := stdioServer(t)
	tr.Env = append(tr.Env, grandchildPidsEnv+"="+pidFile)
	s := connected(t, tr, Config{Mode: ModeLegacy, Replay: ReplayAll})
	first := grandchildren(t, pidFile)
	if len(first) != 1 || !wintest.Running(first[0]) {
		t.Fatalf("before the crash: grandchildren %v, want one running", first)
	}
	res, err := s.Call(t.Context(), protocol.MethodToolsCall, map[string]string{"name": "crash"}, nil)
	if err != nil || string(res) != `{"echo":{"name":"crash"}}` {
		t.Fatalf("Call = %s, %v; want the replayed echo", res, err)
	}
	waitGone(t, "the crashed server's grandchild after the respawn", first[0])
	all := grandchildren(t, pidFile)
	if len(all) != 2 || !wintest.Running(all[1]) {
		t.Fatalf("after the respawn: grandchildren %v, want a second one running", all)
	}
	s.Close()
	waitGone(t, "the respawned server's grandchild after Close", all[1])
}
