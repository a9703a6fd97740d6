package engine

import (
	"errors"
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
		close(s.closing)
		s.lifeCancel()
		<-s.loopDone // the loop exits at once: it never blocks on I/O
		var err error
		if ref := s.lp.ref; ref != nil { // loop has ended: its state is ours now
			if cerr := ref.conn.Close(); cerr != nil && !errors.Is(cerr, transport.ErrClosed) {
				err = cerr
			}
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
	select {
	case <-s.joined:
		return true
	default:
	}
	t := time.NewTimer(CloseTimeout)
	defer t.Stop()
	select {
	case <-s.joined:
		return true
	case <-t.C:
		return false
	}
}
