//go:build unix

package transport

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used so far (user and
// system, every thread). Unlike the wall clock it does not grow while the
// process waits for a CPU, so ratios of it hold on a loaded machine.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
