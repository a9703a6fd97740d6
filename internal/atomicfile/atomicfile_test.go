package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/conduitmcp/conduit/internal/atomicfile"
	"github.com/conduitmcp/conduit/internal/wintest"
)

// TestWrite: the file is replaced, readable by its owner only (see
// checkOwnerOnly), and no temporary file is left behind; a write into a
// missing directory fails and leaves nothing.
func TestWrite(t *testing.T) {
	dir := wintest.TempDir(t)
	path := filepath.Join(dir, "f.json")
	for _, content := range []string{"one", "two"} {
		if err := atomicfile.Write(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != content {
			t.Fatalf("ReadFile = %q, %v; want %q", b, err, content)
		}
	}
	checkOwnerOnly(t, path)
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
	if err := atomicfile.Write(filepath.Join(dir, "missing", "f"), []byte("x")); err == nil {
		t.Error("Write into a missing directory succeeded")
	}
}
