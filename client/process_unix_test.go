//go:build unix

package client_test

import (
	"errors"
	"syscall"
)

// processExists reports whether pid names a process, a zombie included.
func processExists(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}
