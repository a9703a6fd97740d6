//go:build linux

package transport_test

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// exitWaitUnsupported reports why a server's exit cannot be awaited
// without a thread here (no pidfds, or a waitid that does not take them:
// Linux 5.3), or nil.
func exitWaitUnsupported() error {
	fd, err := unix.PidfdOpen(os.Getpid(), 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	// Not our child: ECHILD where waitid knows P_PIDFD, EINVAL where not.
	if err := unix.Waitid(unix.P_PIDFD, fd, nil, unix.WEXITED|unix.WNOHANG, nil); errors.Is(err, unix.EINVAL) {
		return err
	}
	return nil
}
