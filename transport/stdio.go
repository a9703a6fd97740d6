package transport

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Defaults of [Stdio].
const (
	// DefaultTerminateDelay is how long Close waits for the process to
	// exit after closing its stdin, before it sends SIGTERM.
	DefaultTerminateDelay = 2 * time.Second
	// DefaultKillDelay is how long Close waits after SIGTERM before it
	// sends SIGKILL.
	DefaultKillDelay = 2 * time.Second
	// DefaultStderrTail is how many bytes of the end of the process's
	// stderr are kept for [ExitError].
	DefaultStderrTail = 8 << 10
)

const (
	// exitDrainTimeout bounds how long the readers keep reading stdout
	// and stderr after the process exited: a descendant that survived it
	// may hold the pipes open. Output written before the exit is in the
	// pipe already and is read at once.
	exitDrainTimeout = time.Second
	// stdoutEOFGrace is how long Read waits for the process to exit after
	// it closed its stdout, before reporting the connection closed.
	stdoutEOFGrace = 2 * time.Second
	// killWaitTimeout bounds the wait for exit after SIGKILL (a process
	// in uninterruptible sleep may take a while to die).
	killWaitTimeout = 5 * time.Second
)

// Stdio starts an MCP server as a subprocess and speaks newline-delimited
// JSON-RPC over its stdin and stdout (the stdio transport). Apart from Path,
// every field is optional; [Command] fills Path and Args.
//
// Each Connect starts a new process: after a connection ended (the server
// exited or crashed), calling Connect again restarts the server. That is
// how the session layer restarts a server.
//
// The process runs in its own process group (on Unix; on Windows in a job
// object with kill-on-close), so that Close can stop the wrappers'
// children too (npx, uvx, shell scripts). By default it sees only a few
// environment variables; see Env and InheritEnv.
type Stdio struct {
	// Path is the program to run. A name without a path separator is
	// looked up in PATH (on Windows also with the extensions of PATHEXT,
	// so "npx" finds npx.cmd; a .cmd or .bat file runs through cmd.exe,
	// with its arguments quoted for it).
	Path string
	// Args are the arguments, not including the program name.
	Args []string
	// Env holds extra environment variables ("KEY=value"), added after
	// the inherited ones (a later entry for a key wins).
	Env []string
	// InheritEnv passes the whole environment of this process. When
	// false (the default) only HOME, PATH, USER, LOGNAME, SHELL, TERM,
	// LANG, LC_ALL, TMPDIR and TZ are passed (on Windows also APPDATA,
	// COMSPEC, HOMEDRIVE, HOMEPATH, LOCALAPPDATA, NUMBER_OF_PROCESSORS,
	// PATHEXT, PROCESSOR_ARCHITECTURE, PROGRAMDATA, PROGRAMFILES,
	// PROGRAMFILES(X86), PROGRAMW6432, SYSTEMDRIVE, SYSTEMROOT, TEMP,
	// TMP, USERNAME, USERPROFILE and WINDIR, whatever the case of their
	// names), so that secrets in the environment do not reach a server
	// unless asked for.
	InheritEnv bool
	// Dir is the working directory; "" means the current directory.
	Dir string
	// MaxMessageSize is the largest line accepted from the server, in
	// bytes, not counting the line ending; 0 or negative means 16 MiB.
	// A longer line ends the connection with a [*MessageTooLargeError];
	// no more than that is ever buffered.
	MaxMessageSize int
	// Stderr, if not nil, receives a copy of the process's stderr. It
	// must not block: the copy runs on the goroutine that drains stderr.
	Stderr io.Writer
	// StderrTail is how many bytes of the end of stderr are kept for
	// [ExitError]; 0 means [DefaultStderrTail], negative keeps none.
	StderrTail int
	// TerminateDelay is how long Close waits after closing stdin before
	// sending SIGTERM to the process group (CTRL_BREAK_EVENT on Windows);
	// 0 means [DefaultTerminateDelay], negative means no wait.
	TerminateDelay time.Duration
	// KillDelay is how long Close waits after SIGTERM before sending
	// SIGKILL (terminating the job on Windows); 0 means
	// [DefaultKillDelay], negative means no wait.
	KillDelay time.Duration
	// Logger receives warnings (skipped stdout lines, shutdown steps);
	// nil discards them.
	Logger *slog.Logger
}

// Command returns a [Stdio] that runs the program name with args and only
// an allowlist of this process's environment (see [Stdio.InheritEnv]).
func Command(name string, args ...string) *Stdio {
	return &Stdio{Path: name, Args: args}
}

// Kind returns [KindStdio].
func (s *Stdio) Kind() string { return KindStdio }

// ServerKey returns the command line ("cmd:" and the quoted path and
// arguments), the key under which a client remembers this server (see the
// package documentation). When Env or Dir is set, a hash of them follows
// (" env:" and 16 hex digits), so that one program started with other
// settings is another server, and no value of Env is spelled in the key.
func (s *Stdio) ServerKey() string {
	n := len("cmd:") + len(s.Path) + 2
	for _, a := range s.Args {
		n += len(a) + 3
	}
	b := make([]byte, 0, n) // one allocation unless quoting escapes
	b = strconv.AppendQuote(append(b, "cmd:"...), s.Path)
	for _, a := range s.Args {
		b = strconv.AppendQuote(append(b, ' '), a)
	}
	key := string(b)
	if len(s.Env) == 0 && s.Dir == "" {
		return key
	}
	h := sha256.New()
	for _, v := range append([]string{s.Dir}, s.Env...) {
		h.Write([]byte(v))
		h.Write([]byte{0})
	}
	return key + " env:" + hex.EncodeToString(h.Sum(nil)[:8])
}

// Connect starts the process and returns the connection to it. It fails
// if Path is empty or the process cannot be started (the error wraps the
// one from os/exec, e.g. [exec.ErrNotFound]).
//
// Read on the connection returns an [*ExitError] (matching [ErrClosed])
// once the process has exited and every message it wrote was delivered.
// Close runs the shutdown ladder: close stdin, wait TerminateDelay, SIGTERM
// the process group, wait KillDelay, SIGKILL the process group. On
// Windows: close stdin, wait TerminateDelay, CTRL_BREAK_EVENT to the
// process group (when it shares our console; otherwise no wait), wait
// KillDelay, terminate the job.
func (s *Stdio) Connect(ctx context.Context) (Conn, error) {
	if s.Path == "" {
		return nil, errors.New("transport: Stdio.Path is empty")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = s.environ()
	if err := prepareTree(cmd); err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", s.Path, err)
	}
	// Every stream is an *os.File, so os/exec starts no copying
	// goroutines; WaitDelay only guards against that changing.
	cmd.WaitDelay = exitDrainTimeout

	p, tree, err := startWithPipes(cmd, s.Logger)
	if err != nil {
		return nil, fmt.Errorf("transport: starting %q: %w", s.Path, err)
	}
	inW, outR, errR := p.in, p.out, p.err

	tail := s.StderrTail
	if tail == 0 {
		tail = DefaultStderrTail
	}
	c := &stdioConn{
		cmd:            cmd,
		tree:           tree,
		command:        s.Path,
		stdin:          inW,
		stdout:         outR,
		stderr:         errR,
		tail:           tailBuffer{size: max(tail, 0)},
		exited:         make(chan struct{}),
		stderrDone:     make(chan struct{}),
		terminateDelay: delayOrDefault(s.TerminateDelay, DefaultTerminateDelay),
		killDelay:      delayOrDefault(s.KillDelay, DefaultKillDelay),
	}
	// Before the waiter starts: a pipe's idle source clears its read
	// deadline, which the waiter sets once the process exited. The
	// pipes are ours: no one else set one.
	c.lineConn = newLineConnIdle(KindStdio, outR, c.polled[0].of(outR), inW, s.MaxMessageSize, s.Logger)
	c.errs = c
	errSrc := c.polled[1].of(errR)
	c.wg.Add(3)
	// The reader goroutine: stdout lines to Read.
	go func() { defer c.wg.Done(); c.readLoop() }()
	// The stderr goroutine: drains stderr so the server never blocks on
	// it, into the tail buffer and the optional copy.
	go func() { defer c.wg.Done(); c.copyStderr(s.Stderr, errSrc) }()
	// The waiter goroutine: reaps the process and records its exit.
	go func() { defer c.wg.Done(); c.wait() }()
	return c, nil
}

// childPipes are our ends of the child's stdin, stdout and stderr.
type childPipes struct{ in, out, err *os.File }

// startWithPipes connects cmd's three streams to fresh pipes and starts
// it, in a process tree of its own (see startTree). The pipes are made
// here rather than with StdoutPipe so that Wait never closes the read ends
// under the reader: output written just before the exit is still
// delivered.
func startWithPipes(cmd *exec.Cmd, logger *slog.Logger) (childPipes, *procTree, error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	var ends [3][2]*os.File // stdin, stdout, stderr: read end, write end
	for i := range ends {
		r, w, err := stdioPipe(i == 0)
		if err != nil {
			closeAll()
			return childPipes{}, nil, err
		}
		files = append(files, r, w)
		ends[i] = [2]*os.File{r, w}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = ends[0][0], ends[1][1], ends[2][1]
	if err := cmd.Start(); err != nil {
		closeAll()
		return childPipes{}, nil, err
	}
	tree, err := startTree(cmd, loggerOrDiscard(logger))
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		closeAll()
		return childPipes{}, nil, err
	}
	// The child has its copies; ours of the child's ends must go, or we
	// would never see EOF.
	ends[0][0].Close()
	ends[1][1].Close()
	ends[2][1].Close()
	return childPipes{in: ends[0][1], out: ends[1][0], err: ends[2][0]}, tree, nil
}

func delayOrDefault(d, def time.Duration) time.Duration {
	switch {
	case d == 0:
		return def
	case d < 0:
		return 0
	}
	return d
}

// envAllowList is the environment passed by default.
var envAllowList = []string{"HOME", "PATH", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LC_ALL", "TMPDIR", "TZ"}

// envAllowListWindows is added to envAllowList on Windows.
// Names on Windows are case-insensitive ("Path", "SystemRoot").
var envAllowListWindows = []string{"APPDATA", "COMSPEC", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "NUMBER_OF_PROCESSORS", "PATHEXT", "PROCESSOR_ARCHITECTURE", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "WINDIR"}

// environ returns the environment of the process.
func (s *Stdio) environ() []string {
	if s.InheritEnv {
		return append(os.Environ(), s.Env...)
	}
	windows := runtime.GOOS == "windows"
	// Non-nil even when empty: a nil Env would inherit everything.
	env := make([]string, 0, len(envAllowList)+len(s.Env))
	for _, kv := range os.Environ() {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if envAllowed(name, envAllowList, windows) || windows && envAllowed(name, envAllowListWindows, true) {
			env = append(env, kv)
		}
	}
	return append(env, s.Env...)
}

func envAllowed(name string, list []string, foldCase bool) bool {
	for _, a := range list {
		if name == a || foldCase && strings.EqualFold(name, a) {
			return true
		}
	}
	return false
}
