package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"
)

// serverBin is the cmd/testserver binary built by TestMain.
var serverBin string

// TestMain builds cmd/testserver once into a temporary directory, runs the
// tests and checks that no goroutine leaked.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conduit-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	serverBin = filepath.Join(dir, "testserver")
	build := exec.Command("go", "build", "-o", serverBin, "github.com/conduitmcp/conduit/internal/testserver/cmd/testserver")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building cmd/testserver:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m), goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}
