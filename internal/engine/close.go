package engine

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// ErrCloseTimeout is joined to Close's error when goroutines running user
// code did not finish within [CloseTimeout].
var ErrCloseTimeout = errors.New("close timed out waiting for handlers")

// Close ends the session: pending calls fail with [ErrClosed], listen
// streams end, handler contexts are cancelled, the connection is closed
// (for a command, the server process is shut down), and every goroutine
// the session started is joined. It is idempotent and safe to call
// concurrently; it is bounded by the transport's own close bound plus
// [CloseTimeout]. It returns the connection's close error, if any, joined
// with [ErrCloseTimeout] when handlers outlived the bound.
//
// Close must not be called from a handler or a notification callback: it
// waits for those goroutines, so such a call returns only after
// CloseTimeout.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		s.lifeCancel() // closes s.closing()
		idle := s.looping.CompareAndSwap(false, true)
		if idle {
			s.closeIdle()
		} else {
			<-s.loopEnded() // the loop exits at once: it never blocks on I/O
		}
		var err error
		if ref := s.lp.ref; ref != nil { // loop has ended: its state is ours now
			if cerr := ref.conn.Close(); cerr != nil && !errors.Is(cerr, transport.ErrClosed) {
				err = cerr
			}
		}
		if idle {
			s.joinIdle()
		}
		if s.join() {
			s.flushEvents() // the dispatcher has ended: its queue is ours
		} else {
			s.log.Error("session close: goroutines did not finish", "timeout", CloseTimeout)
			err = joinErrs(err, ErrCloseTimeout)
		}
		s.closeErr = err
	})
	return s.closeErr
}

// join waits, at most CloseTimeout, until every goroutine the session
// started has ended (runLoop closes joined), and reports whether they did.
// When they already have, it makes no timer.
func (s *Session) join() bool {
	if s.fired(sigJoined) {
		return true
	}
	t := time.NewTimer(CloseTimeout)
	defer t.Stop()
	select {
	case <-s.wait(sigJoined):
		return true
	case <-t.C:
		return false
	}
}

// closeIdle plays the loop's part in Close when the loop never started
// (nothing was posted since Connect's goroutine handed the state over,
// see start; the CompareAndSwap in Close keeps it from ever starting):
// it shuts the state down as the loop would and marks the session as
// joining, so that no reader starts for the connection's close
// (startReader).
func (s *Session) closeIdle() {
	s.own.Lock() // the hand-over from start, as in runLoop
	s.shutdownLoop()
	s.own.Unlock()
	s.fire(sigLoopDone)
	s.joinMu.Lock()
	s.joining = true
	s.joinMu.Unlock()
}

// joinIdle closes joined, once the connection was closed, for a session
// whose loop never started (closeIdle): at once when no goroutine of the
// session is left (a Streamable HTTP session that never read), otherwise
// by the last of them to end (join bounds the wait). No goroutine is
// added after closeIdle (joining is set).
func (s *Session) joinIdle() { s.wg.closeAtZero() }

// waitGroup is a sync.WaitGroup that can tell whether it is at zero, and
// fire its session's sigJoined when it gets there (closeAtZero).
type waitGroup struct {
	wg    sync.WaitGroup
	n     atomic.Int64
	s     *Session    // whose sigJoined closeAtZero fires; set before any Add (newSession)
	armed atomic.Bool // closeAtZero was called
	fired atomic.Bool // sigJoined was fired
}

func (g *waitGroup) Add(delta int) {
	g.n.Add(int64(delta))
	g.wg.Add(delta)
}

func (g *waitGroup) Done() {
	if g.n.Add(-1) == 0 && g.armed.Load() {
		g.fire()
	}
	g.wg.Done()
}

func (g *waitGroup) Wait() { g.wg.Wait() }

// idle reports whether every goroutine counted has called Done.
func (g *waitGroup) idle() bool { return g.n.Load() == 0 }

// closeAtZero fires sigJoined once every goroutine counted has called Done:
// at once when none is left, else in the last Done. No Add may follow it.
// (Done decrements before it looks at armed, and closeAtZero sets armed
// before it looks at the count, so at least one of them sees both.)
func (g *waitGroup) closeAtZero() {
	g.armed.Store(true)
	if g.idle() {
		g.fire()
	}
}

// fire fires the session's sigJoined, once.
func (g *waitGroup) fire() {
	if g.fired.CompareAndSwap(false, true) {
		g.s.fire(sigJoined)
	}
}
