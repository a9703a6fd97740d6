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

// runPush keeps one events/stream open, reopening it with the cursor when
// it drops or falls silent.
func (s *Subscription) runPush(ready chan<- error) error {
	failures := 0
	for first := true; ; {
		if err := s.checkType(); err != nil {
			return err
		}
		st, err := link.OpenStream(s.ctx, s.ec.c, MethodStream, s.params())
		var active bool
		if err == nil {
			active, err = s.pump(st, &first, ready)
			st.Close()
		}
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
		}
		if err != nil && !errors.Is(err, errSilent) {
			if failures++; terminal(err) || failures >= maxFailures {
				return err
			}
		}
		if !s.sleep(s.backoff(max(failures-1, 0))) {
			return nil
		}
	}
}

// pump delivers one stream's notifications until it ends: active says
// whether it was confirmed; the error is why it ended (nil: gracefully,
// or the subscription stopped; errSilent; the stream's error; a
// termination).
func (s *Subscription) pump(st link.Stream, first *bool, ready chan<- error) (active bool, err error) {
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
				return active, streamErr(st.Err())
			}
			switch n.Method {
			case NotificationActive:
				var p struct {
					Cursor    *string `json:"cursor"`
					Truncated bool    `json:"truncated"`
				}
				_ = json.Unmarshal(n.Params, &p)
				if p.Truncated && p.Cursor != nil && !s.deliver(Event{Name: s.name, Gap: true}) {
					return active, nil
				}
				s.setCursor(p.Cursor)
				if active = true; *first {
					*first = false
					ready <- nil
				}
			case NotificationEvent:
				var o occurrenceWire
				if json.Unmarshal(n.Params, &o) != nil || o.EventID == "" {
					continue
				}
				if !s.deliver(o.event()) {
					return active, nil
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
					return active, nil
				}
			case NotificationTerminated:
				return active, s.terminated(n.Params)
			}
			timer.Reset(hb)
		case <-timer.C:
			return active, errSilent
		case <-s.stop:
			return active, nil
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
