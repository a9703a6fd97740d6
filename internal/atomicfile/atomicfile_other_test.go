//go:build !windows

package atomicfile_test

import (
	"os"
	"testing"
)

// checkOwnerOnly fails unless path has mode 0600.
func checkOwnerOnly(t *testing.T, path string) {
	t.Helper()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, %v; want 0600", fi.Mode().Perm(), err)
	}
}
