package engine

import (
	"context"
	"encoding/json"
	"sync"

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
// ([ErrStreamOverflow]), or when the session closes ([ErrClosed]). The
// client layer re-listens after an error.
type Stream struct {
	s    *Session
	c    *call
	id   int64                 // written by loop at registration, before Listen returns
	ch   chan *jsonrpc.Request // closed by the loop when the stream ends, after done
	done chan struct{}         // closed by the loop when the stream ends, after err is set
	err  error                 // written by loop before done is closed

	ended     bool // owned by loop
	closeOnce sync.Once
}

// ID returns the listen request's id, which is the subscription id.
func (st *Stream) ID() jsonrpc.ID { return jsonrpc.Int64ID(st.id) }

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
		st.s.post(event{kind: evAbandon, call: st.c, cancel: true, reason: "listen closed"})
		select {
		case <-st.done:
		case <-st.s.loopDone:
		}
	})
	return nil
}

// end finishes the stream. It runs on the loop.
func (st *Stream) end(err error) {
	if st.ended {
		return
	}
	st.ended = true
	st.err = err
	// done first: a consumer that sees the channel closed must also see
	// Err.
	close(st.done)
	close(st.ch)
}

// streamNotify hands n to st without blocking; a full buffer ends the
// stream with ErrStreamOverflow and cancels the subscription.
func (s *Session) streamNotify(st *Stream, n *jsonrpc.Request) {
	if st.ended {
		return
	}
	select {
	case st.ch <- n:
	default:
		s.log.Warn("listen stream overflowed; ending it", "id", st.id)
		c := st.c
		if s.unpend(c) {
			s.cancelRemote(c.ref, c.id, "overflow")
		}
		st.end(ErrStreamOverflow)
	}
}

// Listen opens a modern subscriptions/listen stream with params (a
// protocol.ListenParams or any value encoding to the listen params
// object). It returns once the request is sent. It returns [ErrNotModern]
// on a legacy session.
func (s *Session) Listen(ctx context.Context, params any) (*Stream, error) {
	if s.Era() != negotiation.EraModern {
		return nil, ErrNotModern
	}
	raw, err := marshalParams(params)
	if err != nil {
		return nil, err
	}
	for auths := 0; ; {
		st, err := s.listen(ctx, raw)
		if retry, aerr := s.authorize(ctx, protocol.MethodSubscriptionsListen, err, &auths); aerr != nil {
			return nil, aerr
		} else if !retry {
			return st, err
		}
	}
}

// listen makes one attempt of Listen.
func (s *Session) listen(ctx context.Context, raw json.RawMessage) (*Stream, error) {
	c := newCall(protocol.MethodSubscriptionsListen)
	st := &Stream{s: s, c: c, ch: make(chan *jsonrpc.Request, StreamBuffer), done: make(chan struct{})}
	c.stream = st
	werr, err := s.send(ctx, c, &sendSpec{params: raw})
	if err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	return st, nil
}
