//go:build unix

package transport_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// gone reports whether process pid no longer runs. A zombie (killed, not
// yet reaped by init) counts as gone.
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesized command name.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

// TestStdioCloseKillsGrandchildren runs a server that starts a
// grandchild in its process group; the grandchild also holds the stdout
// and stderr pipes. Close must return and leave the grandchild dead, even
// though the server itself exits cleanly on stdin close.
func TestStdioCloseKillsGrandchildren(t *testing.T) {
	c := connect(t, testServer(t, "grandchild"))
	n := readNotification(t, c, "grandchild")
	var p struct{ Pid int }
	if err := json.Unmarshal(n.Params, &p); err != nil || p.Pid <= 0 {
		t.Fatalf("grandchild notification params = %s, %v", n.Params, err)
	}
	t.Cleanup(func() { syscall.Kill(p.Pid, syscall.SIGKILL) }) // in case the test fails
	if gone(p.Pid) {
		t.Fatalf("grandchild %d is not running before Close", p.Pid)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v, want nil (the server exited cleanly)", err)
	}
	// Bounded poll: the kill is asynchronous to reaping.
	deadline := time.Now().Add(testTimeout)
	for !gone(p.Pid) {
		if time.Now().After(deadline) {
			t.Fatalf("grandchild %d still runs after Close", p.Pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestStdioShutdownLadder runs each rung: a server that exits on stdin
// close, one that ignores it (SIGTERM ends it) and one that also ignores
// SIGTERM (SIGKILL ends it).
func TestStdioShutdownLadder(t *testing.T) {
	tests := []struct {
		mode       string
		wantSignal syscall.Signal // 0: clean exit, Close returns nil
	}{
		{"echo", 0},
		{"ignore-stdin", syscall.SIGTERM},
		{"ignore-term", syscall.SIGKILL},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			s := testServer(t, tt.mode)
			s.TerminateDelay = 100 * time.Millisecond
			s.KillDelay = 100 * time.Millisecond
			if tt.wantSignal == 0 {
				// Time enough to exit under any load.
				s.TerminateDelay = testTimeout
			}
			c := connect(t, s)
			if tt.mode != "echo" {
				// The server has set up its signal handling.
				readNotification(t, c, "ready")
			}
			err := c.Close()
			if tt.wantSignal == 0 {
				if err != nil {
					t.Errorf("Close() = %v, want nil", err)
				}
				return
			}
			ee, ok := errors.AsType[*transport.ExitError](err)
			if !ok {
				t.Fatalf("Close() = %v, want *ExitError", err)
			}
			if ee.Signal != tt.wantSignal || ee.Code != -1 {
				t.Errorf("Close() exit = signal %v, code %d; want signal %v, code -1", ee.Signal, ee.Code, tt.wantSignal)
			}
			if err2 := c.Close(); err2 != err {
				t.Errorf("second Close() = %v, want %v", err2, err)
			}
		})
	}
}

// TestStdioShutdownLadderDefaults: with TerminateDelay and KillDelay
// left zero, Close of a server that ignores stdin's close and SIGTERM
// waits DefaultTerminateDelay, then DefaultKillDelay, before SIGKILL ends
// it (lower bounds only: a slow machine cannot make it fail).
func TestStdioShutdownLadderDefaults(t *testing.T) {
	s := testServer(t, "ignore-term")
	c := connect(t, s)
	readNotification(t, c, "ready")
	start := time.Now()
	err := c.Close()
	took := time.Since(start)
	if ee, ok := errors.AsType[*transport.ExitError](err); !ok || ee.Signal != syscall.SIGKILL {
		t.Fatalf("Close() = %v, want the *ExitError of SIGKILL", err)
	}
	if want := transport.DefaultTerminateDelay + transport.DefaultKillDelay; took < want {
		t.Errorf("Close() took %v, want at least DefaultTerminateDelay + DefaultKillDelay = %v", took, want)
	}
}

// TestStdioExitWithGrandchildHoldingStdout: the server crashes while a
// grandchild keeps its stdout open, so stdout never ends. Read must still
// report the exit.
func TestStdioExitWithGrandchildHoldingStdout(t *testing.T) {
	c := connect(t, testServer(t, "grandchild"))
	n := readNotification(t, c, "grandchild")
	var p struct{ Pid int }
	if err := json.Unmarshal(n.Params, &p); err != nil || p.Pid <= 0 {
		t.Fatalf("grandchild notification params = %s, %v", n.Params, err)
	}
	t.Cleanup(func() { syscall.Kill(p.Pid, syscall.SIGKILL) })
	if err := c.Write(t.Context(), request(t, 1, "crash", nil)); err != nil {
		t.Fatal(err)
	}
	readNotification(t, c, "bye")
	err := readErr(t, c)
	if ee, ok := errors.AsType[*transport.ExitError](err); !ok || ee.Code != 3 || !strings.Contains(ee.Stderr, "boom") {
		t.Fatalf("Read() error = %v, want *ExitError with code 3 and the boom line", err)
	}
}
