package engine

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// Stream is a modern subscriptions/listen subscription: a long-lived
// request whose notifications (tagged with _meta subscriptionId equal to
// the listen request's id) are routed here.
//
// The stream ends gracefully when the server answers the listen request or
// sends notifications/cancelled for it, or when Close is called; Err is
// then nil. It ends with an error when the connection or response stream
// drops ([*ConnectionLostError]), when the server answers with an error,
// when the consumer falls [StreamBuffer] notifications behind
// ([ErrStreamOverflow]), or when the session closes ([ErrClosed]). A
// durable stream ([Session.ListenDurable]) is listened again after an
// error instead (relisten.go).
type Stream struct {
	s    *Session
	c    *call                 // the current listen; owned by loop once Listen returned (nil between re-listens)
	id   atomic.Int64          // the current listen's id; written by loop at registration
	ch   chan *jsonrpc.Request // closed by the loop when the stream ends, after done
	done chan struct{}         // closed by the loop when the stream ends, after err is set
	err  error                 // written by loop before done is closed

	ended     bool     // owned by loop
	rl        relisten // re-listening and held notifications; owned by loop
	closeOnce sync.Once
}

// ID returns the listen request's id, which is the subscription id.
func (st *Stream) ID() jsonrpc.ID { return jsonrpc.Int64ID(st.id.Load()) }

// Notifications returns the stream's notifications, in arrival order; the
// first is normally notifications/subscriptions/acknowledged. The channel
// is closed when the stream ends.
func (st *Stream) Notifications() <-chan *jsonrpc.Request { return st.ch }

// Done returns a channel closed when the stream has ended.
func (st *Stream) Done() <-chan struct{} { return st.done }

// Err returns why the stream ended (nil for a graceful end), or nil while
// it runs.
func (st *Stream) Err() error {
	select {
	case <-st.done:
		return st.err
	default:
		return nil
	}
}

// Close ends the subscription: the server is told (notifications/cancelled
// on stdio-like transports, closing the response stream on HTTP). It is
// idempotent and does not block on the network.
func (st *Stream) Close() error {
	st.closeOnce.Do(func() {
		st.s.post(event{kind: evCloseStream, stream: st})
		select {
		case <-st.done:
		case <-st.s.loopEnded():
		}
	})
	return nil
}

// closeStream ends st at its consumer's request: the current listen is
// abandoned (the server told) and no re-listen follows. It runs on the
// loop.
func (s *Session) closeStream(st *Stream) {
	st.rl.closed = true
	if c := st.c; c != nil {
		s.abandonOnLoop(c, true, "listen closed")
		// A re-listen still waiting for a ready state: release its
		// sender (a no-op once registered: deliver never blocks).
		c.deliver(callResult{err: ErrClosed})
	}
	st.end(nil)
}

// end finishes the stream. It runs on the loop.
func (st *Stream) end(err error) {
	if st.ended {
		return
	}
	st.ended = true
	st.err = err
	if st.rl.timer != nil {
		st.rl.timer.Stop()
	}
	st.s.unbacklog(st)
	delete(st.s.lp.durable, st)
	// done first: a consumer that sees the channel closed must also see
	// Err.
	close(st.done)
	close(st.ch)
}

// streamNotify hands n to st without blocking. When the buffer is full,
// a change notification is held back for the loop to deliver later, and
// an equal one already held absorbs it (relisten.go, hold); anything else
// ends the listen with ErrStreamOverflow and cancels it on the server (a
// durable stream then listens again).
func (s *Session) streamNotify(st *Stream, n *jsonrpc.Request) {
	if st.ended {
		return
	}
	if n.Method == protocol.NotificationSubscriptionsAcknowledged {
		s.acknowledged(st)
	}
	if len(st.rl.held) == 0 {
		select {
		case st.ch <- n:
			return
		default:
		}
	}
	if coalesceKey(&dispatchItem{req: n}) != "" && s.hold(st, n) {
		return
	}
	s.log.Warn("listen stream overflowed; ending it", "id", st.id.Load())
	c := st.c
	if s.unpend(c) {
		s.cancelRemote(c.ref, c.id, "overflow")
	}
	s.streamEnded(st, ErrStreamOverflow)
}

// Listen opens a modern subscriptions/listen stream with params (a
// protocol.ListenParams or any value encoding to the listen params
// object). It returns once the request is sent. It returns [ErrNotModern]
// on a legacy session.
func (s *Session) Listen(ctx context.Context, params any) (*Stream, error) {
	return s.listenAuthorized(ctx, protocol.MethodSubscriptionsListen, params, false)
}

// listenAuthorized opens a listen stream, or another long-lived request
// of method (see OpenStream) (durable: see ListenDurable), authorizing as
// a call does.
func (s *Session) listenAuthorized(ctx context.Context, method string, params any, durable bool) (*Stream, error) {
	if s.Era() != negotiation.EraModern {
		return nil, ErrNotModern
	}
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	for auths := 0; ; {
		st, err := s.listenWith(ctx, method, raw, durable)
		if retry, aerr := s.authorize(ctx, method, err, &auths); aerr != nil {
			return nil, aerr
		} else if !retry {
			return st, err
		}
	}
}

// listenWith makes one attempt of Listen (durable: of ListenDurable; of
// OpenStream for another method).
func (s *Session) listenWith(ctx context.Context, method string, raw json.RawMessage, durable bool) (*Stream, error) {
	c := newCall(method)
	st := &Stream{s: s, c: c, ch: make(chan *jsonrpc.Request, StreamBuffer), done: make(chan struct{})}
	st.rl.durable, st.rl.params = durable, raw
	c.stream = st
	werr, err := s.send(ctx, c, &sendSpec{params: raw})
	if err == nil {
		err = werr
	}
	if err != nil {
		if durable {
			s.post(event{kind: evCloseStream, stream: st})
		}
		return nil, err
	}
	return st, nil
}
