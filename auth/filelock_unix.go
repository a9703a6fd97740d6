//go:build unix

package auth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPollInterval is how often a blocked lockFile retries. flock(2) with
// LOCK_EX blocks in the kernel and cannot be interrupted by a context, so
// the lock is polled with LOCK_NB instead.
const lockPollInterval = 10 * time.Millisecond

// lockFile takes an exclusive flock(2) on path (created with mode 0600),
// waiting until it is free or ctx ends.
func lockFile(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("auth: opening lock file: %v", err)
	}
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() {
				syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
				f.Close()
			}, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("auth: locking %s: %v", path, err)
		}
		t.Reset(lockPollInterval)
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}
