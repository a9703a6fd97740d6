//go:build unix

package transport

import (
	"log/slog"
	"os"
	"os/exec"
	"syscall"
)

// prepareTree puts the process in a new process group whose id is its
// pid, so that signals can reach its descendants too.
func prepareTree(cmd *exec.Cmd) error {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return nil
}

// procTree is the server's process tree: its process group.
type procTree struct{ pid int }

// startTree returns the tree of the process cmd started.
func startTree(cmd *exec.Cmd, _ *slog.Logger) (*procTree, error) {
	return &procTree{pid: cmd.Process.Pid}, nil
}

// stdioPipe returns a pipe for one of the child's streams.
func stdioPipe(childReads bool) (r, w *os.File, err error) { return os.Pipe() }

// interrupt sends SIGTERM to the process group.
func (t *procTree) interrupt() error { return syscall.Kill(-t.pid, syscall.SIGTERM) }

// kill sends SIGKILL to the process group.
func (t *procTree) kill() error { return syscall.Kill(-t.pid, syscall.SIGKILL) }

// killRest kills what is left of the process group once its leader was
// reaped. The group id cannot have been reused while a member lives;
// when none does, the call fails harmlessly with ESRCH.
func (t *procTree) killRest() { syscall.Kill(-t.pid, syscall.SIGKILL) }

// release frees what the tree holds: nothing on Unix.
func (t *procTree) release() {}

// exitSignal returns the signal that ended the process, or 0.
func exitSignal(st *os.ProcessState) syscall.Signal {
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}
