//go:build windows

package wintest_test

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/internal/wintest"
)

// TestRunningAndKill: a process started here runs until Kill, and then
// Running says so (bounded wait: the exit is asynchronous).
func TestRunningAndKill(t *testing.T) {
	if os.Getenv("CONDUIT_WINTEST_SLEEP") != "" {
		time.Sleep(time.Minute)
		return
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestRunningAndKill$")
	cmd.Env = append(os.Environ(), "CONDUIT_WINTEST_SLEEP=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !wintest.Running(pid) {
		t.Fatalf("Running(%d) = false for a started process", pid)
	}
	wintest.Kill(pid)
	cmd.Wait()
	if wintest.Running(pid) {
		t.Errorf("Running(%d) = true after Kill and Wait", pid)
	}
}
