package transport

import (
	"testing"
	"time"
)

// TestGETBackoff: without ReconnectBackoff and MaxReconnectBackoff the
// GET stream's reconnects wait 1 s, doubling up to 30 s (as
// StreamableHTTP documents), also after failures past what a shift
// holds; set ones replace the first wait and the cap.
func TestGETBackoff(t *testing.T) {
	tests := []struct {
		name     string
		backoffs [2]time.Duration
		want     map[int]time.Duration // failures in a row -> wait
	}{
		{"default", [2]time.Duration{}, map[int]time.Duration{
			1: time.Second, 2: 2 * time.Second, 3: 4 * time.Second, 5: 16 * time.Second,
			6: 30 * time.Second, 7: 30 * time.Second, 100: 30 * time.Second, 1 << 30: 30 * time.Second}},
		{"negative", [2]time.Duration{-1, -1}, map[int]time.Duration{1: time.Second, 6: 30 * time.Second}},
		{"set", [2]time.Duration{20 * time.Millisecond, 50 * time.Millisecond}, map[int]time.Duration{
			1: 20 * time.Millisecond, 2: 40 * time.Millisecond, 3: 50 * time.Millisecond, 1000: 50 * time.Millisecond}},
	}
	for _, tt := range tests {
		c := &httpConn{backoffs: tt.backoffs}
		for n, want := range tt.want {
			if got := c.backoff(n); got != want {
				t.Errorf("%s: backoff(%d) = %v, want %v", tt.name, n, got, want)
			}
		}
	}
}
