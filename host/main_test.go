package host_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"
)

// testserverBin is the project's test server (internal/testserver/cmd/
// testserver), and slowserverBin the slow-starting one
// (host/internal/cmd/slowserver), built once by TestMain.
var testserverBin, slowserverBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "conduit-host-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	testserverBin = filepath.Join(dir, "testserver"+exe)
	slowserverBin = filepath.Join(dir, "slowserver"+exe)
	for bin, pkg := range map[string]string{testserverBin: "../internal/testserver/cmd/testserver", slowserverBin: "./internal/cmd/slowserver"} {
		cmd := exec.Command("go", "build", "-o", bin, pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m), goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}
