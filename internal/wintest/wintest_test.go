package wintest_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/conduitmcp/conduit/internal/wintest"
)

// TestTempDir: the directory exists, and it is gone with what it held,
// a subdirectory included, after the test's cleanup (under Wine too).
func TestTempDir(t *testing.T) {
	var dir string
	t.Run("use", func(t *testing.T) {
		dir = wintest.TempDir(t)
		if err := os.MkdirAll(filepath.Join(dir, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{"a", filepath.Join("sub", "b")} {
			if err := os.WriteFile(filepath.Join(dir, p), []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Stat after cleanup = %v, want not exist", err)
	}
}
