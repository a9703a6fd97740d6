//go:build windows

package auth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/windows"
)

// The lock's wait: LockFileEx without LOCKFILE_FAIL_IMMEDIATELY blocks in
// the kernel, out of reach of a context, so a blocked lockFile retries
// with a backoff from lockPollMin to lockPollMax.
const (
	lockPollMin = 5 * time.Millisecond
	lockPollMax = 100 * time.Millisecond
)

// lockFile takes an exclusive LockFileEx lock on the first byte of path
// (created if missing), waiting until it is free or ctx ends. Windows
// releases the lock when the holder's handle is closed, also when the
// holder dies.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: opening lock file: %v", err)
	}
	h := windows.Handle(f.Fd())
	wait := lockPollMin
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		ol := new(windows.Overlapped)
		err := windows.LockFileEx(h, windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, ol)
		if err == nil {
			return func() {
				windows.UnlockFileEx(h, 0, 1, 0, new(windows.Overlapped))
				f.Close()
			}, nil
		}
		if !errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
			f.Close()
			return nil, fmt.Errorf("auth: locking %s: %v", path, err)
		}
		t.Reset(wait)
		wait = min(2*wait, lockPollMax)
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
