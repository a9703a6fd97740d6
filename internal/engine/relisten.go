package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Re-listening: a durable [Stream] ([Session.ListenDurable]) that drops
// is opened again by the loop, paced (issue 15, item 6). The backoff
// resets only after a stream that lived [relistenStable] past its
// acknowledgement (the first wait and the cap are settable:
// [Liveness.RelistenInitial], [Liveness.RelistenMax]): a server that acknowledges and then ends each stream
// at once is re-listened ever more slowly (100 ms, 200 ms, ... 30 s),
// instead of every 100 ms.
const (
	relistenInitial = 100 * time.Millisecond
	relistenMax     = 30 * time.Second
	// relistenAttempts bounds re-listens in a row that end before their
	// acknowledgement; the stream then ends with the last error.
	relistenAttempts = 10
	// relistenStable is how long an acknowledged stream must live for
	// its end to count as a fresh start (the backoff resets).
	relistenStable = 10 * time.Second
	// maxHeld bounds the notifications a stream whose consumer is
	// behind holds back, coalesced (see streamNotify).
	maxHeld = 64
)

// relisten is the re-listen state of a durable stream; owned by loop.
type relisten struct {
	durable bool
	closed  bool          // Close was called
	params  []byte        // the listen params, re-sent as they are
	acked   time.Time     // the current listen's acknowledgement; zero before
	opens   int           // acknowledged listens so far
	fails   int           // listens in a row that ended before their acknowledgement
	delay   time.Duration // the next backoff
	timer   *time.Timer   // the scheduled re-listen, if any
	// held: notifications held back while the consumer is behind, in
	// order; heldKeys: their coalescing keys.
	held     []*jsonrpc.Request
	heldKeys map[string]bool
}

// ListenDurable is [Session.Listen] for a stream the engine keeps open:
// when it drops (the connection or response stream is lost, the server
// answers the listen with an error, the consumer falls behind) the loop
// listens again, with backoff, on the same Stream; each new listen's
// acknowledgement arrives on Notifications like the first, and
// [EventRelistened] is reported. The stream ends when the server ends it
// gracefully, on Close, when the session ends, or after
// relistenAttempts re-listens in a row that were not acknowledged.
func (s *Session) ListenDurable(ctx context.Context, params any) (*Stream, error) {
	return s.listenAuthorized(ctx, protocol.MethodSubscriptionsListen, params, true)
}

// streamEnded handles the end of st's current listen with err: a durable
// stream is re-listened, anything else ends. It runs on the loop.
func (s *Session) streamEnded(st *Stream, err error) {
	rl := &st.rl
	if !rl.durable || err == nil || rl.closed || st.ended || s.lp.st == StateFailed || s.lp.st == StateClosed || errors.Is(err, jsonrpc.ErrMethodNotFound) {
		// -32601: the server has no subscriptions/listen, a final
		// answer; listening again would only be refused again.
		st.end(err)
		return
	}
	initial, ceiling := s.relistenPacing()
	now := time.Now()
	if !rl.acked.IsZero() && now.Sub(rl.acked) >= relistenStable {
		rl.delay = initial
	}
	if rl.acked.IsZero() {
		rl.fails++
	}
	if rl.fails >= relistenAttempts {
		st.end(fmt.Errorf("re-listening after %d attempts: %w", rl.fails, err))
		return
	}
	rl.delay = max(rl.delay, initial)
	wait := rl.delay/2 + rand.N(rl.delay/2+1)
	rl.delay = min(2*rl.delay, ceiling)
	rl.acked = time.Time{}
	st.c = nil
	s.log.Info("listen stream dropped; re-listening", "err", err, "after", wait)
	rl.timer = time.AfterFunc(wait, func() { s.post(event{kind: evRelisten, stream: st}) })
}

// relistenNow sends st's listen again, from a short-lived goroutine (the
// one send path); a failure comes back as evRelistenFailed. It runs on
// the loop.
func (s *Session) relistenNow(st *Stream) {
	if st.ended || st.c != nil {
		return
	}
	st.rl.timer = nil
	c := newCall(protocol.MethodSubscriptionsListen)
	c.stream = st
	st.c = c
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		werr, err := s.send(s.dctx.Context, c, &sendSpec{params: st.rl.params})
		if err == nil {
			err = werr
		}
		if err != nil {
			s.post(event{kind: evRelistenFailed, stream: st, call: c, err: err})
		}
	}()
}

// relistenFailed: the re-listen c of st could not be sent. It runs on the
// loop.
func (s *Session) relistenFailed(st *Stream, c *call, err error) {
	if st.c != c || st.ended {
		return
	}
	s.unpend(c)
	s.streamEnded(st, err)
}

// acknowledged notes that st's current listen was acknowledged; a second
// acknowledgement of the same listen is no new listen (no EventRelistened)
// and does not move the moment relistenStable counts from. It runs on the
// loop.
func (s *Session) acknowledged(st *Stream) {
	rl := &st.rl
	if !rl.acked.IsZero() {
		return
	}
	rl.acked, rl.fails = time.Now(), 0
	if rl.opens > 0 {
		s.emit(Event{Kind: EventRelistened, Method: protocol.MethodSubscriptionsListen, ID: st.ID()})
	}
	rl.opens++
}

// hold keeps n back for st, whose consumer is behind: an equal
// notification already held absorbs it (counted as a drop). It reports
// false when n cannot be held (the held notifications are at their
// bound). It runs on the loop.
func (s *Session) hold(st *Stream, n *jsonrpc.Request) bool {
	rl := &st.rl
	key := coalesceKey(&dispatchItem{req: n})
	if key != "" && rl.heldKeys[key] {
		s.drop(n.Method, 1)
		return true
	}
	if len(rl.held) >= maxHeld {
		return false
	}
	if len(rl.held) == 0 {
		s.lp.backlog = append(s.lp.backlog, st)
	}
	rl.held = append(rl.held, n)
	if key != "" {
		if rl.heldKeys == nil {
			rl.heldKeys = make(map[string]bool)
		}
		rl.heldKeys[key] = true
	}
	return true
}

// fed: the consumer of the first stream of the backlog took its first
// held notification. It runs on the loop.
func (s *Session) fed() {
	lp := &s.lp
	st := lp.backlog[0]
	rl := &st.rl
	delete(rl.heldKeys, coalesceKey(&dispatchItem{req: rl.held[0]}))
	rl.held[0] = nil
	rl.held = rl.held[1:]
	if len(rl.held) == 0 {
		rl.held = nil
		lp.backlog = lp.backlog[1:]
	}
}

// unbacklog forgets st's held notifications (st ended). It runs on the
// loop.
func (s *Session) unbacklog(st *Stream) {
	if len(st.rl.held) == 0 {
		return
	}
	st.rl.held, st.rl.heldKeys = nil, nil
	lp := &s.lp
	for i, b := range lp.backlog {
		if b == st {
			lp.backlog = append(lp.backlog[:i], lp.backlog[i+1:]...)
			return
		}
	}
}
