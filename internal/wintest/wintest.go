// Package wintest holds what the tests of several packages need to run
// on Windows and under Wine, where the Windows tests run in CI (see
// .ci/wine/run).
package wintest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TempDir is t.TempDir, except on Windows, where the directory is removed
// file by file at the end of the test: under Wine 8, os.RemoveAll (and so
// t.TempDir's cleanup) fails with "Invalid function".
func TempDir(t testing.TB) string {
	t.Helper()
	if runtime.GOOS != "windows" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "conduit-test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeTree(dir) })
	return dir
}

// removeTree removes dir and what it holds, one entry at a time.
func removeTree(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if e.IsDir() {
			removeTree(p)
		} else {
			os.Remove(p)
		}
	}
	os.Remove(dir)
}
