//go:build linux

package transport

import (
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// waitProcess reaps cmd's process once it has exited. Until then it waits
// on a pidfd of the process in the runtime's poller, as a goroutine
// blocked on a socket does, so that a running server holds no OS thread:
// os/exec's Wait alone would keep one in the wait system call for the
// server's whole life (a host with 200 servers, 200 threads), and waking
// that thread at the exit costs a connection's Close tens of
// microseconds. Without pidfds (Linux before 5.3, a seccomp filter that
// refuses them) it is Wait alone.
func waitProcess(cmd *exec.Cmd) error {
	if f := openPidfd(cmd.Process.Pid); f != nil {
		awaitExit(f)
		f.Close()
	}
	return cmd.Wait()
}

// openPidfd returns a pidfd of process pid registered with the runtime's
// poller, or nil. pid is our child, not reaped yet (only waitProcess
// reaps it), so it cannot name another process.
func openPidfd(pid int) *os.File {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err == unix.EINVAL {
		// Before Linux 5.10 the flag is unknown; the descriptor's flag
		// does as well for the poller.
		if fd, err = unix.PidfdOpen(pid, 0); err == nil {
			if err = unix.SetNonblock(fd, true); err != nil {
				unix.Close(fd)
			}
		}
	}
	if err != nil {
		return nil
	}
	// NewFile registers a non-blocking descriptor with the poller.
	return os.NewFile(uintptr(fd), "pidfd")
}

// awaitExit blocks until the process of pidfd f has exited (f polls
// readable then), or until waiting on f fails, which leaves the wait to
// the caller's Wait.
func awaitExit(f *os.File) {
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(pidfdExited)
}

// pidfdExited reports whether the process of pidfd fd has exited, or true
// when that cannot be known (Wait will tell).
func pidfdExited(fd uintptr) bool {
	// WNOWAIT leaves the exit status for Wait; WNOHANG makes this a
	// check. The kernel zeroes info when the process has not exited,
	// and fills in SIGCHLD when it has.
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return err != nil || info.Signo != 0
}
