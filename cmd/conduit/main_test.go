package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"

	"github.com/conduitmcp/conduit/internal/testserver"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// Binaries built once by TestMain.
var (
	conduitBin    string
	testserverBin string
)

// runTimeout bounds every conduit run of the tests.
const runTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	flag.Parse()
	dir, err := os.MkdirTemp("", "conduit-cli-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	conduitBin = filepath.Join(dir, "conduit"+exe)
	testserverBin = filepath.Join(dir, "testserver"+exe)
	for _, b := range []struct{ out, pkg string }{
		{conduitBin, "."},
		{testserverBin, "../../internal/testserver/cmd/testserver"},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n", b.pkg, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m), goleak.Cleanup(func(int) { os.RemoveAll(dir) }))
}

// result is one run of the conduit binary.
type result struct {
	stdout, stderr string
	code           int
}

// runConduit runs the CLI with args and stdin and waits for it.
func runConduit(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, conduitBin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatalf("running conduit %v: %v", args, err)
	}
	if ctx.Err() != nil {
		t.Fatalf("conduit %v did not finish within %v; stderr:\n%s", args, runTimeout, errb.String())
	}
	return result{stdout: out.String(), stderr: errb.String(), code: code}
}

// Transports and eras of the end-to-end matrix.
var (
	transports = []string{"stdio", "http", "websocket"}
	eras       = []string{"modern", "legacy"}
)

// server is a test server reachable over one transport: targetArgs are
// the conduit arguments that name it (a URL, or "--" and a command, which
// must come last).
type server struct {
	srv        *testserver.Server // nil for stdio (it runs in a child process)
	targetArgs []string
	dir        string // scratch directory
}

// startServer serves a single-era test server over transport. Over stdio
// the server runs as a child of conduit; extra holds testserver flags
// (stdio) and opts tweaks (in-process servers).
func startServer(t *testing.T, transport, era string, opts testserver.Options, stdioFlags ...string) *server {
	t.Helper()
	e, err := testserver.ParseEra(era)
	if err != nil {
		t.Fatal(err)
	}
	s := &server{dir: t.TempDir()}
	switch transport {
	case "stdio":
		s.targetArgs = append([]string{"--", testserverBin, "-era", era}, stdioFlags...)
		return s
	case "http", "websocket":
		opts.Era = e
		s.srv = testserver.New(opts)
		h := s.srv.Handler()
		if transport == "websocket" {
			h = s.srv.WebSocketHandler()
		}
		ts := httptest.NewServer(h)
		t.Cleanup(func() {
			s.srv.Close() // ends long-lived streams first
			ts.Close()
		})
		u := ts.URL + "/mcp"
		if transport == "websocket" {
			u = "ws" + strings.TrimPrefix(u, "http")
		}
		s.targetArgs = []string{u}
		return s
	}
	t.Fatalf("unknown transport %q", transport)
	return nil
}

// args places the target in a conduit command line: a URL right after
// the command's flags, a stdio command at the end.
func (s *server) args(cmd []string, rest ...string) []string {
	out := append([]string(nil), cmd...)
	if s.targetArgs[0] != "--" {
		out = append(out, s.targetArgs...)
		return append(out, rest...)
	}
	out = append(out, rest...)
	return append(out, s.targetArgs...)
}

// Volatile parts of outputs and their replacements.
var normalizers = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`127\.0\.0\.1:\d+`), "127.0.0.1:PORT"},
	{regexp.MustCompile(`\b\d+(\.\d+)?(ns|µs|us|ms|s)\b`), "DURATION"},
	{regexp.MustCompile(`"p(50|99)_ms": [0-9.e+-]+`), `"p${1}_ms": N`},
}

func normalize(s string) string {
	s = strings.ReplaceAll(s, testserverBin, "TESTSERVER")
	for _, n := range normalizers {
		s = n.re.ReplaceAllString(s, n.repl)
	}
	return s
}

// checkGolden compares got with testdata/name.golden (or rewrites it with
// -update).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update to create it): %v", err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (run go test -update after checking):\n%s", path, lineDiff(string(want), got))
	}
}

// lineDiff shows the first differing lines.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(lengths differ)"
}
