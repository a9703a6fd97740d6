//go:build !unix && !windows

package auth

import "context"

// lockFile is a no-op on systems without flock(2) or LockFileEx: a [FileStore] shared by
// several processes there is not protected against two of them refreshing
// the same rotating refresh token at once. Within one process, FileStore
// still serializes.
func lockFile(context.Context, string) (func(), error) { return func() {}, nil }
