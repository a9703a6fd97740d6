package transport

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// parsedEvent is an event as the tests compare it.
type parsedEvent struct {
	Type, Data, LastID string
}

func parseAll(t *testing.T, in string, limit, readSize int) ([]parsedEvent, time.Duration, error) {
	t.Helper()
	var got []parsedEvent
	retry, err := readEvents(&trickleReader{b: []byte(in), n: readSize}, limit, func(ev event) bool {
		got = append(got, parsedEvent{ev.Type, string(ev.Data), ev.LastID})
		return true
	})
	return got, retry, err
}

// TestReadEventsWHATWG checks the event-stream rules, with the input cut
// into reads of every size and the read buffer small enough to put line
// ends (a CR before its LF, say) on buffer boundaries.
func TestReadEventsWHATWG(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []parsedEvent
		retry    time.Duration
	}{
		{"LF", "data: a\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"CRLF", "data: a\r\n\r\n", []parsedEvent{{"", "a", ""}}, 0},
		{"CR", "data: a\r\rdata: b\r\r", []parsedEvent{{"", "a", ""}, {"", "b", ""}}, 0},
		{"mixed line ends", "data: a\r\ndata: b\rdata: c\n\r\n", []parsedEvent{{"", "a\nb\nc", ""}}, 0},
		{"BOM", "\xEF\xBB\xBFdata: a\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"only the first BOM", "\xEF\xBB\xBFdata: a\n\n\xEF\xBB\xBFdata: b\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"comments", ": hello\ndata: a\n: more\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"multi-line data", "data: a\ndata:\ndata:  b\n\n", []parsedEvent{{"", "a\n\n b", ""}}, 0},
		{"no space after colon", "data:a\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"field without colon", "data\n\n", []parsedEvent{{"", "", ""}}, 0},
		{"event type resets", "event: x\ndata: a\n\ndata: b\n\n", []parsedEvent{{"x", "a", ""}, {"", "b", ""}}, 0},
		{"id persists", "id: 1\ndata: a\n\ndata: b\n\n", []parsedEvent{{"", "a", "1"}, {"", "b", "1"}}, 0},
		{"id only (priming)", "id: p0\n\n", []parsedEvent{{"", "", "p0"}}, 0},
		{"empty id", "id: 1\n\nid\ndata: a\n\n", []parsedEvent{{"", "", "1"}, {"", "a", ""}}, 0},
		{"id with NUL ignored", "id: 1\n\nid: a\x00b\ndata: a\n\n", []parsedEvent{{"", "", "1"}, {"", "a", "1"}}, 0},
		{"retry", "retry: 1500\n\n", nil, 1500 * time.Millisecond},
		{"bad retry ignored", "retry: 10\nretry: 1x\nretry: -5\nretry:\nretry: 99999999999\n\n", nil, 10 * time.Millisecond},
		{"unknown field", "foo: bar\ndata: a\n\n", []parsedEvent{{"", "a", ""}}, 0},
		{"blank lines alone", "\n\n\r\n", nil, 0},
		{"incomplete final event dropped", "data: a\n\ndata: b\n", []parsedEvent{{"", "a", ""}}, 0},
		{"no final line end", "data: a\n\ndata: b", []parsedEvent{{"", "a", ""}}, 0},
		{"long line", "data: " + strings.Repeat("x", 100) + "\r\n\r\n", []parsedEvent{{"", strings.Repeat("x", 100), ""}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func(n int) { eventBufSize = n }(eventBufSize)
			for _, buf := range []int{16, 17, 19, 23, 32 << 10} {
				eventBufSize = buf
				for _, rs := range []int{1, 2, 3, 7, 64, 1 << 20} {
					got, retry, err := parseAll(t, tc.in, 1<<20, rs)
					if err != nil {
						t.Fatalf("buffer %d, reads of %d: error %v", buf, rs, err)
					}
					if diff := cmp.Diff(tc.want, got); diff != "" || retry != tc.retry {
						t.Fatalf("buffer %d, reads of %d: retry %v (want %v), events (-want +got):\n%s", buf, rs, retry, tc.retry, diff)
					}
				}
			}
		})
	}
}

func TestReadEventsLimit(t *testing.T) {
	ev := "data: " + strings.Repeat("x", 1000) + "\n\n"
	if _, _, err := parseAll(t, ev+ev, 2000, 64); err != nil {
		t.Errorf("events of 1 KB under a 2 KB limit: %v", err)
	}
	_, _, err := parseAll(t, ev, 500, 64)
	if _, ok := errors.AsType[*MessageTooLargeError](err); !ok {
		t.Errorf("an event over the limit: %v; want a *MessageTooLargeError", err)
	}
	// A line that never ends is bounded by the limit too.
	_, _, err = parseAll(t, "data: "+strings.Repeat("x", 10000), 500, 64)
	if _, ok := errors.AsType[*MessageTooLargeError](err); !ok {
		t.Errorf("an endless line: %v; want a *MessageTooLargeError", err)
	}
}

// TestReadEventsLinear: parsing one large event in 64-byte reads costs
// about the same per byte at 1 MiB and at 8 MiB (the go-sse parser it
// replaces rescanned the event after every read: 8 times the size cost
// 64 times the time). The cost is the process's CPU time, not the wall
// clock: on a loaded machine a parse that spans many scheduler slices
// waits for a CPU far longer than one that fits in a slice, which says
// nothing about the parser.
func TestReadEventsLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing")
	}
	small, large := largeEvent(1<<20), largeEvent(8<<20)
	cost := func(ev []byte) time.Duration {
		start := cpuTime()
		if _, err := readEvents(&trickleReader{b: ev, n: 64}, 16<<20, func(event) bool { return true }); err != nil {
			t.Fatal(err)
		}
		return cpuTime() - start
	}
	bestSmall, bestLarge := time.Duration(1<<62), time.Duration(1<<62)
	for range 3 { // interleaved, so that both sizes see the same machine
		bestSmall = min(bestSmall, cost(small))
		bestLarge = min(bestLarge, cost(large))
	}
	// Linear is 8x; quadratic would be 64x. Allow for a noisy machine.
	msg := fmt.Sprintf("1 MiB took %v of CPU, 8 MiB %v (%.1fx)", bestSmall, bestLarge, float64(bestLarge)/float64(bestSmall))
	if bestLarge > 24*bestSmall {
		t.Errorf("%s; want about 8x", msg)
	} else {
		t.Log(msg)
	}
}
