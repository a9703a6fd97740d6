package testenv

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// Module is the interop module path.
const Module = "github.com/conduitmcp/conduit/interop"

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// Root returns the directory of the interop module (the one holding its
// go.mod), found by walking up from the working directory.
func Root() (string, error) {
	rootOnce.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for {
			b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
			if err == nil && bytes.HasPrefix(bytes.TrimSpace(b), []byte("module "+Module+"\n")) {
				root = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				rootErr = errors.New("testenv: interop go.mod not found above the working directory")
				return
			}
			dir = parent
		}
	})
	return root, rootErr
}

// MustRoot is Root for tests: it fails t on error.
func MustRoot(t testing.TB) string {
	t.Helper()
	r, err := Root()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Node returns the Node 22 binary installed by `npm ci` (npm package
// node@22 under the alias node22). The tests fail rather than skip when it
// is missing: run `npm ci` in interop/ first (run-ci.sh does).
func Node(t testing.TB) string {
	t.Helper()
	p := filepath.Join(MustRoot(t), "node_modules", "node22", "bin", "node")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("Node 22 not installed (%v): run `npm ci` in %s", err, MustRoot(t))
	}
	return p
}

// NodeModule returns the path of rel under node_modules, failing t when it
// is absent.
func NodeModule(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(MustRoot(t), "node_modules", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("%s not installed (%v): run `npm ci` in %s", rel, err, MustRoot(t))
	}
	return p
}

// BindLocalhost returns the NODE_OPTIONS value that preloads
// conformance/bind-localhost.mjs, forcing every Node TCP server onto
// 127.0.0.1.
func BindLocalhost(t testing.TB) string {
	t.Helper()
	return "--import=" + filepath.Join(MustRoot(t), "conformance", "bind-localhost.mjs")
}

var (
	buildMu    sync.Mutex
	buildCache = map[string]string{}
	buildDir   string
)

// Build compiles the main package pkg (a path relative to the interop
// root, e.g. "./servers/goserver") once per test binary and returns the
// executable's path. The binaries live in a directory removed by Cleanup.
func Build(t testing.TB, pkg string, tags ...string) string {
	t.Helper()
	key := pkg + "|" + strings.Join(tags, ",")
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := buildCache[key]; ok {
		return p
	}
	if buildDir == "" {
		d, err := os.MkdirTemp("", "conduit-interop-bin-")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = d
	}
	out := filepath.Join(buildDir, fmt.Sprintf("%s-%d", filepath.Base(pkg), len(buildCache)))
	args := []string{"build", "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	args = append(args, pkg)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = MustRoot(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	buildCache[key] = out
	return out
}

// Cleanup removes the binaries Build made. [Main] calls it; a TestMain of
// its own calls it after m.Run.
func Cleanup() {
	buildMu.Lock()
	defer buildMu.Unlock()
	if buildDir != "" {
		os.RemoveAll(buildDir)
		buildDir = ""
		clear(buildCache)
	}
}

// Main is the TestMain of the interop test packages: it runs the tests,
// removes the binaries Build made and, when the tests passed, fails the
// run if goroutines leaked. It does not return.
func Main(m *testing.M) {
	code := m.Run()
	Cleanup()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
