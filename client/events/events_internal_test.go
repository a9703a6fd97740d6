package events

import (
	"testing"
	"time"
)

// TestOptionsDefaults: zero and negative Options fields select the
// defaults their comments (and README.md) give; set ones are kept.
func TestOptionsDefaults(t *testing.T) {
	want := Options{PollFloor: time.Second, PollInterval: 30 * time.Second, HeartbeatTimeout: 60 * time.Second, MaxBackoff: 30 * time.Second, Buffer: 64}
	neg := Options{PollFloor: -1, PollInterval: -1, HeartbeatTimeout: -1, MaxBackoff: -1, Buffer: -1}
	set := Options{PollFloor: 2, PollInterval: 3, HeartbeatTimeout: 4, MaxBackoff: 5, Buffer: 6}
	for _, tc := range []struct {
		name     string
		in, want Options
	}{
		{"zero", Options{}, want},
		{"negative", neg, want},
		{"set", set, set},
	} {
		if got := tc.in.withDefaults(); got != tc.want {
			t.Errorf("%s: %+v.withDefaults() = %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
}
