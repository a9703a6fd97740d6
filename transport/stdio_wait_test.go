//go:build linux || windows

package transport_test

import (
	"runtime/metrics"
	"testing"
)

// inSyscalls returns how many goroutines are in a system call now.
func inSyscalls() int64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestStdioWaiterHoldsNoThread: on Linux (a pidfd in the runtime's
// poller) and Windows (a wait registered with the system's thread pool)
// a running server is not waited for by a goroutine blocked in a system
// call, so that connected servers hold no OS thread each; the process is
// still reaped when it exits (the other stdio tests).
func TestStdioWaiterHoldsNoThread(t *testing.T) {
	if err := exitWaitUnsupported(); err != nil {
		t.Skipf("the waiter blocks a thread here, as documented: %v", err)
	}
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
