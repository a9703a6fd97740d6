package events

import (
	"math"
	"time"
)

// pollResult is the result of events/poll.
type pollResult struct {
	Events     []occurrenceWire `json:"events"`
	Cursor     *string          `json:"cursor"`
	Truncated  bool             `json:"truncated"`
	HasMore    bool             `json:"hasMore"`
	NextPollMs *int64           `json:"nextPollMs"`
}

// runPoll polls until the subscription stops or fails: at once while
// the server says hasMore (and brings new events), else after nextPollMs
// (at least the floor).
func (s *Subscription) runPoll(ready chan<- error) error {
	failures := 0
	for first := true; ; {
		if err := s.checkType(); err != nil {
			return err
		}
		p := s.params()
		if s.opts.MaxEvents > 0 {
			p["maxEvents"] = s.opts.MaxEvents
		}
		var res pollResult
		err := s.ec.c.Call(s.ctx, MethodPoll, p, &res)
		if err != nil {
			if s.stopped() {
				return nil
			}
			if first {
				ready <- err
				return err
			}
			if failures++; terminal(err) || failures >= maxFailures {
				return err
			}
			if !s.sleep(s.backoff(failures - 1)) {
				return nil
			}
			continue
		}
		failures = 0
		if first {
			ready <- nil
			first = false
		}
		if res.Truncated && res.Cursor != nil && !s.deliver(Event{Name: s.name, Gap: true}) {
			return nil
		}
		news := false
		for _, o := range res.Events {
			news = news || o.EventID == "" || !s.seenID(o.EventID)
			if !s.deliver(o.event()) {
				return nil
			}
		}
		// The cursor advances once the events before it were handed
		// over; a null or absent one is never replayed.
		s.setCursor(res.Cursor)
		if !s.sleep(s.pollWait(res, news)) {
			return nil
		}
	}
}

// pollWait is the wait before the poll after res; news says res brought
// an event not delivered before. A result that says hasMore but brings
// nothing new is waited after as any other: otherwise a server that
// keeps saying so would be polled in a tight loop.
func (s *Subscription) pollWait(res pollResult, news bool) time.Duration {
	if res.HasMore && news {
		return 0
	}
	wait := s.ec.opts.PollInterval
	if res.NextPollMs != nil {
		// Saturated, not wrapped, past what a Duration holds.
		wait = time.Duration(min(*res.NextPollMs, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
	}
	return max(wait, s.ec.opts.PollFloor)
}
