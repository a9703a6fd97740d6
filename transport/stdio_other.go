//go:build !unix && !windows

package transport

import (
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"syscall"
)

// prepareTree does nothing here: without process groups or job objects
// only the process itself is stopped.
func prepareTree(cmd *exec.Cmd) error { return nil }

// procTree is the server's process alone.
type procTree struct{ p *os.Process }

func startTree(cmd *exec.Cmd, _ *slog.Logger) (*procTree, error) {
	return &procTree{p: cmd.Process}, nil
}

func stdioPipe(childReads bool) (r, w *os.File, err error) { return os.Pipe() }

// interrupt fails: there is no interrupt to send, and the ladder goes on
// to kill.
func (t *procTree) interrupt() error { return errors.ErrUnsupported }

func (t *procTree) kill() error { return t.p.Kill() }

func (t *procTree) killRest() {}

func (t *procTree) release() {}

// exitSignal returns 0: exit signals are a Unix notion.
func exitSignal(st *os.ProcessState) syscall.Signal { return 0 }
