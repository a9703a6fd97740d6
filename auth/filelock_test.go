package auth

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/internal/wintest"
)

// lockHolderEnv makes the re-executed test binary take lockFile on the
// path it names, print "locked" and hold the lock until its stdin closes
// or it is killed (see TestMain).
const lockHolderEnv = "CONDUIT_AUTH_LOCK_HOLDER"

func runLockHolder(path string) int {
	release, err := lockFile(context.Background(), path)
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	os.Stdout.WriteString("locked\n")
	bufio.NewReader(os.Stdin).ReadString('\n')
	release()
	return 0
}

// tempDir is wintest.TempDir (Wine cannot remove a directory tree).
func tempDir(t *testing.T) string { return wintest.TempDir(t) }

// startLockHolder starts a process that holds the lock on path.
func startLockHolder(t *testing.T, path string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHolderEnv+"="+path)
	cmd.Stderr = os.Stderr
	// The holder reads its stdin, which stays open until it is killed.
	if _, err := cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "locked\n" {
		t.Fatalf("lock holder said %q, %v", line, err)
	}
	return cmd
}

// TestLockFileAcrossProcesses: while another process holds the lock,
// lockFile waits and gives up when its context ends; once the holder is
// killed (it never released the lock), the lock is free again.
func TestLockFileAcrossProcesses(t *testing.T) {
	path := filepath.Join(tempDir(t), "tokens.json.lock")
	holder := startLockHolder(t, path)
	ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
	defer cancel()
	if release, err := lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		if err == nil {
			release()
		}
		t.Fatalf("lockFile while another process holds it = %v, want DeadlineExceeded", err)
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	holder.Wait()
	start := time.Now()
	release, err := lockFile(testCtx(t), path)
	if err != nil {
		t.Fatalf("lockFile after the holder died = %v", err)
	}
	release()
	t.Logf("the lock was free %v after the holder was reaped", time.Since(start).Round(time.Millisecond))
}

// TestCrossProcessRefreshRounds: two processes share one FileStore and a
// rotating refresh token; in each of three rounds the token expires and
// both want a fresh one at once: exactly one refresh per expiry, and both
// get the same token (a second refresh of the rotated token would fail
// with invalid_grant).
func TestCrossProcessRefreshRounds(t *testing.T) {
	s, store := sharedFileStore(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	prev := ""
	for round := 1; round <= 3; round++ {
		expireStored(t, store, s)
		var outs [2]bytes.Buffer
		cmds := make([]*exec.Cmd, len(outs))
		ins := make([]io.WriteCloser, len(outs))
		for i := range cmds {
			cmd := exec.Command(exe, "-test.run=^$")
			cmd.Env = append(os.Environ(), helperEnv+"=1", "CONDUIT_AUTH_SERVER="+s.mcpURL(),
				"CONDUIT_AUTH_CLIENT=cli", "CONDUIT_AUTH_STORE="+store.Path)
			cmd.Stdout, cmd.Stderr = &outs[i], os.Stderr
			in, err := cmd.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			cmds[i], ins[i] = cmd, in
		}
		for _, in := range ins { // go: both refresh at once
			in.Close()
		}
		for i, cmd := range cmds {
			if err := cmd.Wait(); err != nil {
				t.Fatalf("round %d, process %d: %v", round, i, err)
			}
		}
		if got := s.count("refresh_token"); got != round {
			t.Errorf("round %d: %d refreshes in all, want %d (one per expiry)", round, got, round)
		}
		tok := outs[0].String()
		if tok == "" || tok != outs[1].String() || tok == prev {
			t.Errorf("round %d: tokens %q and %q (previous %q), want one new token", round, tok, outs[1].String(), prev)
		}
		prev = tok
	}
}

// sharedFileStore returns a server with the public client "cli" and a
// FileStore holding a token for it, as processes sharing the store find
// it.
func sharedFileStore(t *testing.T) (*testServer, *FileStore) {
	t.Helper()
	s := newTestServer(t, nil)
	s.addClient(&tClient{id: "cli", method: "none", redirects: []string{testRedirect}})
	store := &FileStore{Path: filepath.Join(tempDir(t), "tokens.json")}
	c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientID: "cli", Interaction: autoApprove(t), RedirectURL: testRedirect, Store: store})
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	return s, store
}
