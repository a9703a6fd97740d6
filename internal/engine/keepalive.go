package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// Liveness configures the keepalive and the pacing of re-listens. The
// zero value turns the keepalive off and selects the default pacing.
type Liveness struct {
	// KeepAlive is the interval of the keepalive: while the session is
	// ready it sends ping (legacy) or server/discover (modern, which has
	// no ping) every KeepAlive; 0 or negative turns it off.
	KeepAlive time.Duration
	// KeepAliveTimeout is how long a keepalive request may go unanswered
	// before the peer counts as gone: the connection is then healed as a
	// lost one (closed, the stdio process shut down and respawned, the
	// era re-negotiated; in-flight requests follow the replay policy,
	// listen streams are opened again). 0 or negative selects KeepAlive.
	KeepAliveTimeout time.Duration
	// RelistenInitial and RelistenMax pace the re-listens of durable
	// streams (relisten.go): the first wait and the cap of the doubling
	// backoff; 0 or negative selects 100 ms and 30 s.
	RelistenInitial time.Duration
	RelistenMax     time.Duration
}

// ErrKeepAliveTimeout is the cause of a heal started because a keepalive
// request went unanswered for [Liveness.KeepAliveTimeout].
var ErrKeepAliveTimeout = errors.New("the peer did not answer the keepalive in time")

// relistenPacing returns the re-listen backoff's first wait and cap.
func (s *Session) relistenPacing() (initial, ceiling time.Duration) {
	initial, ceiling = relistenInitial, relistenMax
	if l := s.cfg.Liveness; l.RelistenInitial > 0 {
		initial = l.RelistenInitial
	}
	if l := s.cfg.Liveness; l.RelistenMax > 0 {
		ceiling = l.RelistenMax
	}
	return initial, max(initial, ceiling)
}

// startKeepAlive starts the keepalive goroutine when one is configured.
// It posts to the loop, which counts the goroutine in wg (wg.Add happens
// only on the loop once it runs).
func (s *Session) startKeepAlive() {
	if s.cfg.Liveness.KeepAlive <= 0 {
		return
	}
	s.post(event{kind: evStep, step: func() {
		s.wg.Add(1)
		go s.keepAlive()
	}})
}

// keepAlive sends a keepalive request every KeepAlive while the session
// is ready, and heals the connection when one goes unanswered for
// KeepAliveTimeout. It ends with the session.
func (s *Session) keepAlive() {
	defer s.wg.Done()
	l := s.cfg.Liveness
	timeout := l.KeepAliveTimeout
	if timeout <= 0 {
		timeout = l.KeepAlive
	}
	t := time.NewTicker(l.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.dctx.Context.Done():
			return
		}
		if !s.State().ready() {
			continue
		}
		gen := s.Generation()
		method := protocol.MethodPing
		if s.Era() == negotiation.EraModern {
			method = protocol.MethodDiscover
		}
		ctx, cancel := context.WithTimeout(s.dctx.Context, timeout)
		_, err := s.Call(ctx, method, nil, &CallOptions{Replay: ReplayNone})
		cancel()
		if err == nil || s.dctx.Context.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			// Answered (a JSON-RPC error is an answer too), or lost
			// otherwise: a lost connection heals by itself.
			continue
		}
		cause := fmt.Errorf("%w (%s unanswered for %v)", ErrKeepAliveTimeout, method, timeout)
		s.log.Warn("keepalive unanswered; healing the connection", "method", method, "timeout", timeout)
		s.post(event{kind: evStep, step: func() {
			// Only the connection the keepalive was sent on: a heal
			// may have replaced it meanwhile.
			if s.pub.Load().gen == gen && s.lp.ref != nil {
				s.emit(Event{Kind: EventKeepAliveTimeout, Method: method, Err: cause})
				s.startHeal(s.lp.ref, cause, false)
			}
		}})
	}
}
