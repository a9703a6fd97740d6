// Package examples_test checks that every program in examples/ can be
// copied into a user's module and run: each is copied alone into a fresh
// module that requires Conduit (replaced by this checkout), built there,
// where an import of one of Conduit's internal packages would not compile,
// and run against its built-in server.
package examples_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestExamplesRunFromAUserModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every example")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"agent":   "step 2: echo",
		"handler": "-> Hello, Ada!",
		"http":    "resource file:///hello.txt",
		"listen":  "notifications/prompts/list_changed",
		"stdio":   "echo: hello over stdio",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			src, err := os.ReadFile(filepath.Join(name, "main.go"))
			if err != nil {
				t.Fatal(err)
			}
			mod := "module example.com/user\n\ngo 1.26\n\nrequire github.com/conduitmcp/conduit v0.0.0\n\nreplace github.com/conduitmcp/conduit => " + root + "\n"
			for file, data := range map[string][]byte{"main.go": src, "go.mod": []byte(mod), "go.sum": sum} {
				if err := os.WriteFile(filepath.Join(dir, file), data, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			bin := filepath.Join(dir, name)
			build := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
			build.Dir = dir
			// Everything comes from the module cache of this checkout.
			build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off")
			if out, err := build.CombinedOutput(); err != nil {
				t.Fatalf("building examples/%s in a user module: %v\n%s", name, err, out)
			}
			run := exec.CommandContext(ctx, bin)
			out, err := run.CombinedOutput()
			if err != nil || !strings.Contains(string(out), want) {
				t.Errorf("examples/%s: %v, output lacks %q:\n%s", name, err, want, out)
			}
		})
	}
}
