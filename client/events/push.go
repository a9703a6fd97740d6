package events

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/client/internal/link"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// minSilence is the least silence that counts as a dead stream, however
// fast the heartbeats came.
const minSilence = 500 * time.Millisecond

// errSilent ends a push stream that stayed silent past HeartbeatTimeout.
var errSilent = errors.New("events: stream silent past the heartbeat timeout")

// stableStream is how long a push stream must live past its confirmation
// for the backoff before the next one to start again from its first
// step: a server whose streams keep ending right after confirming them
// is not reopened at the first step for ever.
const stableStream = 10 * time.Second

// runPush keeps one events/stream open, reopening it with the cursor when
// it drops or falls silent. failures counts the attempts in a row that
// failed (which end the subscription); reopens, the streams reopened
// since the last stable one, paces the backoff.
func (s *Subscription) runPush(ready chan<- error) error {
	failures, reopens := 0, 0
	for first := true; ; {
		if err := s.checkType(); err != nil {
			return err
		}
		st, err := link.OpenStream(s.ctx, s.ec.c, MethodStream, s.params())
		var confirmed time.Time
		if err == nil {
			confirmed, err = s.pump(st, &first, ready)
			st.Close()
		}
		active := !confirmed.IsZero()
		if s.stopped() {
			return nil
		}
		if err == nil && !active {
			// Ended gracefully, but never confirmed: a failed attempt,
			// on the first stream and on every later one.
			err = &client.Error{Op: MethodStream, Kind: client.KindProtocol, Err: errors.New("stream ended before notifications/events/active")}
		}
		if first {
			ready <- err
			return err
		}
		if active {
			failures = 0
			if time.Since(confirmed) >= stableStream {
				reopens = 0
			}
		}
		if err != nil && !errors.Is(err, errSilent) {
			if failures++; terminal(err) || failures >= maxFailures {
				return err
			}
		}
		if !s.sleep(s.backoff(reopens)) {
			return nil
		}
		reopens++
	}
}

// pump delivers one stream's notifications until it ends: confirmed is
// when it was first confirmed (zero: never); the error is why it ended
// (nil: gracefully, or the subscription stopped; errSilent; the stream's
// error; a termination).
func (s *Subscription) pump(st link.Stream, first *bool, ready chan<- error) (confirmed time.Time, err error) {
	hb := s.ec.opts.HeartbeatTimeout
	timer := time.NewTimer(hb)
	defer timer.Stop()
	// The heartbeat interval is not announced: it is learnt from the
	// gaps between heartbeats, and a silence of three of the longest
	// seen (at most HeartbeatTimeout) counts as a dead stream.
	var lastBeat time.Time
	var longest time.Duration
	for {
		select {
		case n, ok := <-st.Notifications():
			if !ok {
				return confirmed, streamErr(st.Err())
			}
			switch n.Method {
			case NotificationActive:
				var p struct {
					Cursor    *string `json:"cursor"`
					Truncated bool    `json:"truncated"`
				}
				_ = json.Unmarshal(n.Params, &p)
				if p.Truncated && p.Cursor != nil && !s.deliver(Event{Name: s.name, Gap: true}) {
					return confirmed, nil
				}
				s.setCursor(p.Cursor)
				if confirmed.IsZero() {
					confirmed = time.Now()
				}
				if *first {
					*first = false
					ready <- nil
				}
			case NotificationEvent:
				var o occurrenceWire
				if json.Unmarshal(n.Params, &o) != nil || o.EventID == "" {
					continue
				}
				if !s.deliver(o.event()) {
					return confirmed, nil
				}
				s.setCursor(o.Cursor)
			case NotificationHeartbeat:
				var p struct {
					Cursor *string `json:"cursor"`
				}
				if json.Unmarshal(n.Params, &p) == nil {
					s.setCursor(p.Cursor)
				}
				if now := time.Now(); !lastBeat.IsZero() {
					longest = max(longest, now.Sub(lastBeat))
					hb = min(s.ec.opts.HeartbeatTimeout, max(3*longest, minSilence))
					lastBeat = now
				} else {
					lastBeat = now
				}
			case NotificationError:
				var p struct {
					Error *jsonrpc.Error `json:"error"`
				}
				if json.Unmarshal(n.Params, &p) == nil && p.Error != nil && !s.deliver(Event{Name: s.name, Err: p.Error}) {
					return confirmed, nil
				}
			case NotificationTerminated:
				return confirmed, s.terminated(n.Params)
			}
			timer.Reset(hb)
		case <-timer.C:
			return confirmed, errSilent
		case <-s.stop:
			return confirmed, nil
		}
	}
}

// streamErr is the error that ended a stream, as a *client.Error.
func streamErr(err error) error {
	if err == nil {
		return nil
	}
	var rpc *jsonrpc.Error
	if errors.As(err, &rpc) {
		return &client.Error{Op: MethodStream, Kind: client.KindServer, Err: rpc}
	}
	if errors.Is(err, client.ErrClosed) {
		return &client.Error{Op: MethodStream, Kind: client.KindClosed, Err: client.ErrClosed}
	}
	return &client.Error{Op: MethodStream, Kind: client.KindNetwork, Err: err}
}
