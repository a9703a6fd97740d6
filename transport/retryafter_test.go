package transport_test

import (
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// TestParseRetryAfter: seconds and HTTP dates (relative to now); an
// absent, negative, past or malformed value is 0 (issue 29, item 7).
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0},
		{"0", 0},
		{"7", 7 * time.Second},
		{"-3", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second},
		{now.Add(-time.Minute).Format(http.TimeFormat), 0},
		{"soon", 0},
		{"+7", 0},
		{"9223372036", 9223372036 * time.Second},
		{"9223372037", math.MaxInt64},
		{"99999999999999999999999", math.MaxInt64},
		{"Fri, 31 Dec 9999 23:59:59 GMT", math.MaxInt64},
	} {
		if got := transport.ParseRetryAfter(tc.in, now); got != tc.want {
			t.Errorf("ParseRetryAfter(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
