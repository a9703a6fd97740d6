package transport

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the test process has used so far (user and
// kernel, every thread). Unlike the wall clock it does not grow while the
// process waits for a CPU, so ratios of it hold on a loaded machine.
func cpuTime() time.Duration {
	var created, exited, kernel, user syscall.Filetime
	p, err := syscall.GetCurrentProcess()
	if err == nil {
		err = syscall.GetProcessTimes(p, &created, &exited, &kernel, &user)
	}
	if err != nil {
		panic(err)
	}
	ticks := func(f syscall.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100) // 100 ns units
}
