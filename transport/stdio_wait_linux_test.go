//go:build linux

package transport_test

import (
	"os"

	"golang.org/x/sys/unix"
)

// exitWaitUnsupported reports why a server's exit cannot be awaited
// without a thread here (no pidfds), or nil.
func exitWaitUnsupported() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
