package host_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExampleProgram builds and runs examples/host with its demo config:
// two servers (copies of itself) answer, the missing one fails alone.
func TestExampleProgram(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := filepath.Join(t.TempDir(), "host-example")
	if out, err := exec.Command("go", "build", "-o", bin, "../examples/host").CombinedOutput(); err != nil {
		t.Fatalf("building examples/host: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil {
		t.Fatalf("examples/host: %v\n%s", err, out)
	}
	for _, want := range []string{"alpha      stdio  ready", "missing    stdio  failed", `"name": "beta__whoami"`, "alpha__whoami: I am alpha", "beta__whoami: I am beta"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
