//go:build unix

package bench

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) this process has used so
// far: the client's own cost of a connect, the servers' excluded (they
// are other processes, except none on stdio's side of the pipe).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
