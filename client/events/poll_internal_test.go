package events

import (
	"math"
	"testing"
	"time"
)

// TestPollWait: the wait before the next poll is the server's nextPollMs,
// never under the floor, saturated (not wrapped around to a short or
// negative wait) past what a Duration holds; PollInterval without one; 0
// while the server has more and the result brought new events.
func TestPollWait(t *testing.T) {
	ms := func(v int64) *int64 { return &v }
	s := &Subscription{ec: &Client{opts: Options{PollFloor: time.Second, PollInterval: 30 * time.Second}}}
	for _, tc := range []struct {
		res  pollResult
		want time.Duration
		old  bool // the result brought no new event
	}{
		{pollResult{}, 30 * time.Second, false},
		{pollResult{HasMore: true, NextPollMs: ms(5000)}, 0, false},
		{pollResult{HasMore: true, NextPollMs: ms(5000)}, 5 * time.Second, true},
		{pollResult{HasMore: true}, 30 * time.Second, true},
		{pollResult{NextPollMs: ms(5000)}, 5 * time.Second, false},
		{pollResult{NextPollMs: ms(10)}, time.Second, false},
		{pollResult{NextPollMs: ms(-5)}, time.Second, false},
		{pollResult{NextPollMs: ms(math.MaxInt64 / int64(time.Millisecond))}, math.MaxInt64 / time.Millisecond * time.Millisecond, false},
		{pollResult{NextPollMs: ms(9223372036855)}, math.MaxInt64 / time.Millisecond * time.Millisecond, false},
		{pollResult{NextPollMs: ms(math.MaxInt64)}, math.MaxInt64 / time.Millisecond * time.Millisecond, false},
	} {
		if got := s.pollWait(tc.res, !tc.old); got != tc.want {
			t.Errorf("pollWait(hasMore %v, nextPollMs %v, nothing new %v) = %v, want %v", tc.res.HasMore, tc.res.NextPollMs, tc.old, got, tc.want)
		}
	}
}
