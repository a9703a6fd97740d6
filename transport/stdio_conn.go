package transport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// stdioConn is the connection to a server process started by [Stdio].
//
// It runs three goroutines, all joined by Close: the reader (stdout lines
// to Read, in the embedded lineConn), the stderr drain and the waiter that
// reaps the process.
type stdioConn struct {
	*lineConn

	cmd     *exec.Cmd
	tree    *procTree // the process and its descendants
	command string
	stdin   *os.File   // our write end of the child's stdin
	stdout  *os.File   // our read end of the child's stdout
	stderr  *os.File   // our read end of the child's stderr
	tail    tailBuffer // in the connection: one allocation less per connect
	// polled are stdout and stderr as idle sources, where they are
	// (see idleSourceOf); in the connection, as tail.
	polled [2]polledFile

	// exited is closed by the waiter goroutine once the process was
	// reaped; waitErr and cmd.ProcessState are written before.
	exited  chan struct{}
	waitErr error
	// stderrDone is closed by the stderr goroutine when stderr ended.
	stderrDone chan struct{}

	terminateDelay time.Duration
	killDelay      time.Duration

	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error // written inside closeOnce
}

// wait is the waiter goroutine. On Linux and Windows it holds no OS
// thread while the server runs (see waitProcess).
func (c *stdioConn) wait() {
	c.waitErr = waitProcess(c.cmd)
	close(c.exited)
	// A descendant that outlived the process may hold stdout and stderr
	// open; the readers stop at this deadline instead of waiting for it.
	// What the process wrote before it exited is in the pipes already.
	d := time.Now().Add(exitDrainTimeout)
	c.stdout.SetReadDeadline(d)
	c.stderr.SetReadDeadline(d)
}

// stderrReadSize is the most the stderr goroutine reads at once.
const stderrReadSize = 4096

// copyStderr is the stderr goroutine. src is stderr as an [idleSource]
// when it is one (taken before the waiter could set a deadline): its wait
// for output then holds no buffer.
func (c *stdioConn) copyStderr(w io.Writer, src idleSource) {
	defer close(c.stderrDone)
	var buf []byte // kept when src is nil
	for {
		var (
			piece *[chunkSize]byte
			n     int
			err   error
		)
		if src != nil {
			piece, n, err = src.readPooled(stderrReadSize)
			if piece != nil {
				buf = piece[:stderrReadSize]
			}
		} else {
			if buf == nil {
				buf = make([]byte, stderrReadSize)
			}
			n, err = c.stderr.Read(buf)
		}
		if n > 0 {
			c.tail.Write(buf[:n])
			if w != nil {
				if _, werr := w.Write(buf[:n]); werr != nil {
					c.logger.Warn("transport: copying server stderr failed; dropping the copy", "command", c.command, "err", werr)
					w = nil
				}
			}
		}
		if piece != nil {
			chunkPool.Put(piece)
			buf = nil
		}
		if err != nil {
			return
		}
	}
}

// finishRead decides what Read reports once stdout ended: the process's
// [*ExitError] when it exited, after stderr was drained so the tail is
// complete.
func (c *stdioConn) finishRead(err error) error {
	if _, ok := errors.AsType[*MessageTooLargeError](err); ok {
		return err
	}
	t := time.NewTimer(stdoutEOFGrace)
	defer t.Stop()
	select {
	case <-c.exited:
	case <-c.closing:
		return ErrClosed
	case <-t.C:
		return fmt.Errorf("%w: server %q closed its stdout", ErrClosed, c.command)
	}
	select {
	case <-c.stderrDone:
	case <-c.closing:
		return ErrClosed
	}
	return c.exitError()
}

// exitError describes the exit. Call only after exited is closed.
func (c *stdioConn) exitError() *ExitError {
	e := &ExitError{Command: c.command, Code: -1, Stderr: c.tail.String(), Err: c.waitErr}
	if st := c.cmd.ProcessState; st != nil {
		e.Code = st.ExitCode()
		e.Signal = exitSignal(st)
	}
	return e
}

func (c *stdioConn) mapWriteErr(err error) error {
	select {
	case <-c.exited:
		return fmt.Errorf("%w: writing to server %q: the process exited", ErrClosed, c.command)
	default:
	}
	return fmt.Errorf("%w: writing to server %q: %v", ErrClosed, c.command, err)
}

// Close stops the process and joins the connection's goroutines. The
// ladder: close stdin; wait TerminateDelay; SIGTERM the process group; wait
// KillDelay; SIGKILL the process group (on Windows: CTRL_BREAK_EVENT, then
// terminating the job; a rung that could not be sent is not waited for).
// Once the process is gone, what is left of its process group (its job) is
// killed too, so no descendant outlives the connection.
//
// Close returns nil when the process exited with status 0, and otherwise
// the [*ExitError] (for example one with Signal SIGTERM when the ladder
// had to go that far). It is idempotent and safe to call concurrently;
// every call returns the same result.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(c.shutdown)
	return c.closeErr
}

func (c *stdioConn) shutdown() {
	c.beginClose()
	pid := c.cmd.Process.Pid
	// Closing stdin asks the server to exit; it also fails a Write
	// blocked on a full pipe.
	c.stdin.Close()
	exited := c.waitExit(c.terminateDelay)
	if !exited {
		c.logger.Warn("transport: server did not exit after stdin was closed; sending SIGTERM", "command", c.command, "pid", pid)
		if err := c.tree.interrupt(); err != nil {
			// Nothing was sent (a Windows server without our console),
			// so there is nothing to wait for.
			c.logger.Debug("transport: SIGTERM failed", "pid", pid, "err", err)
		} else {
			exited = c.waitExit(c.killDelay)
		}
	}
	if !exited {
		c.logger.Warn("transport: server did not exit after SIGTERM; sending SIGKILL", "command", c.command, "pid", pid)
		if err := c.tree.kill(); err != nil {
			c.logger.Debug("transport: SIGKILL failed", "pid", pid, "err", err)
		}
		exited = c.waitExit(killWaitTimeout)
	}
	if !exited {
		// Not seen in practice (a process stuck in the kernel): unblock
		// the readers and give up on the waiter rather than hang.
		c.logger.Error("transport: server did not exit after SIGKILL", "command", c.command, "pid", pid)
		c.tree.release()
		c.stdout.Close()
		c.stderr.Close()
		<-c.readDone
		<-c.stderrDone
		c.closeErr = fmt.Errorf("%w: server %q (pid %d) did not exit after SIGKILL", ErrClosed, c.command, pid)
		return
	}
	c.tree.killRest()
	c.tree.release()
	// Bounded: the readers end at EOF, which the kill above brings, or
	// at the drain deadline the waiter set.
	c.wg.Wait()
	c.stdout.Close()
	c.stderr.Close()
	if st := c.cmd.ProcessState; st != nil && st.Success() {
		return
	}
	c.closeErr = c.exitError()
}

// waitExit waits up to d for the process to exit and reports whether it
// did.
func (c *stdioConn) waitExit(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-c.exited:
			return true
		default:
			return false
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-c.exited:
		return true
	case <-t.C:
		return false
	}
}
