package engine

import (
	"testing"
)

// TestConnectAllocs bounds what a connect and close over the pipe
// allocates (the bench server of bench_test.go included): 218 (modern)
// and 200 (legacy) before issue 16's connect savings, 200 and 182 after.
// The bounds leave room for scheduling noise.
func TestConnectAllocs(t *testing.T) {
	if raceEnabled || testing.Short() {
		t.Skip("allocation counts differ under the race detector")
	}
	for _, tc := range []struct {
		name   string
		legacy bool
		max    float64
	}{{"modern", false, 208}, {"legacy", true, 190}} {
		t.Run(tc.name, func(t *testing.T) {
			n := testing.AllocsPerRun(50, func() {
				tr := &pipeOnce{legacy: tc.legacy}
				s, err := Connect(t.Context(), tr, Config{})
				if err != nil {
					t.Fatal(err)
				}
				s.Close()
				<-tr.done
			})
			if n > tc.max {
				t.Errorf("a %s connect allocates %v times, want at most %v", tc.name, n, tc.max)
			}
			t.Logf("%s connect: %v allocations", tc.name, n)
		})
	}
}

// TestEventBufferSmall: the loop's event queue is allocated at its small
// size (see eventBuffer).
func TestEventBufferSmall(t *testing.T) {
	s := newSession(t.Context(), nil, Config{})
	defer s.lifeCancel()
	if c := cap(s.events); c != eventBuffer || c > 16 {
		t.Errorf("cap(events) = %d, want %d", c, eventBuffer)
	}
}
