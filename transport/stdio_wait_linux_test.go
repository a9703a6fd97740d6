//go:build linux

package transport_test

import (
	"errors"
	"os"
	"runtime/metrics"
	"testing"

	"golang.org/x/sys/unix"
)

// inSyscalls returns how many goroutines are in a system call now.
func inSyscalls() int64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestStdioWaiterHoldsNoThread: on Linux a running server is waited for
// in the runtime's poller (a pidfd), not by a goroutine blocked in the
// wait system call, so that connected servers hold no OS thread each;
// the process is still reaped and its exit reported.
func TestStdioWaiterHoldsNoThread(t *testing.T) {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EPERM) {
		t.Skipf("no pidfds here (%v): the waiter blocks a thread, as documented", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	unix.Close(fd)

	const n = 4
	before := inSyscalls()
	for range n {
		c := connect(t, testServer(t, "echo"))
		call(t, c, 1, "echo", map[string]any{"x": 1})
	}
	if got := inSyscalls() - before; got >= n {
		t.Errorf("%d goroutines more are in system calls with %d servers connected, want fewer than %d (a waiter blocked in wait per server)", got, n, n)
	}
}
