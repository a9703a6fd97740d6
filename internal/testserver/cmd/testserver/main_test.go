package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"
)

// TestMain re-runs the test binary as the testserver command when
// TESTSERVER_ARGS is set (arguments separated by \x1f), so the tests below
// exercise a real stdio subprocess.
func TestMain(m *testing.M) {
	if args, ok := os.LookupEnv("TESTSERVER_ARGS"); ok {
		var list []string
		if args != "" {
			list = strings.Split(args, "\x1f")
		}
		os.Exit(run(list))
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}

const watchdog = 10 * time.Second

type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
}

func start(t *testing.T, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "TESTSERVER_ARGS="+strings.Join(args, "\x1f"))
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.WaitDelay = watchdog
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &proc{cmd: cmd, in: in, lines: make(chan string, 16)}
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	return p
}

func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatalf("writing to the server: %v", err)
	}
}

func (p *proc) next(t *testing.T) (string, bool) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		return l, ok
	case <-time.After(watchdog):
		t.Fatal("watchdog: no output")
	}
	return "", false
}

func (p *proc) wait(t *testing.T) int {
	t.Helper()
	p.in.Close()
	for range p.lines {
	}
	err := p.cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0
}

const discover = `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

func TestExitOnceWithMarker(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "exited")
	args := []string{"-fault", "exit", "-exit-marker", marker, "-banner", "hello from testserver"}

	first := start(t, args...)
	if l, _ := first.next(t); l != "hello from testserver" {
		t.Errorf("banner = %q", l)
	}
	first.send(t, discover)
	if l, ok := first.next(t); ok {
		t.Errorf("first process answered %q, want an exit", l)
	}
	if code := first.wait(t); code != 3 {
		t.Errorf("exit code = %d, want 3", code)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("marker not created: %v", err)
	}

	second := start(t, args...)
	second.next(t) // banner
	second.send(t, discover)
	l, _ := second.next(t)
	m, err := jsonrpc.DecodeMessage([]byte(l))
	if err != nil {
		t.Fatalf("second process answered %q: %v", l, err)
	}
	var res map[string]any
	if resp, ok := m.(*jsonrpc.Response); !ok || resp.Error != nil || json.Unmarshal(resp.Result, &res) != nil || res["resultType"] != "complete" {
		t.Errorf("second process discover = %s", l)
	}
	if code := second.wait(t); code != 0 {
		t.Errorf("exit code after stdin closed = %d, want 0", code)
	}
}

func TestFlags(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // substring of the discover answer
	}{
		{"legacy only", []string{"-era", "legacy"}, `"code":-32601`},
		{"fault flag", []string{"-fault", "rpc-error:code=-32602,message=nope"}, `"code":-32602,"message":"nope"`},
		{"versions", []string{"-versions", "2026-07-28,2027-01-01"}, `"supportedVersions":["2026-07-28","2027-01-01"]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.args...)
			p.send(t, discover)
			l, _ := p.next(t)
			if !strings.Contains(l, tc.want) {
				t.Errorf("answer %s, want it to contain %s", l, tc.want)
			}
			p.wait(t)
		})
	}
	if code := run([]string{"-era", "sideways"}); code != 2 {
		t.Errorf("bad -era exit code = %d, want 2", code)
	}
	if code := run([]string{"-fault", "nope"}); code != 2 {
		t.Errorf("bad -fault exit code = %d, want 2", code)
	}
}
