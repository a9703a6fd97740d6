package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
)

// inFlight is how many calls TestManyCallsInFlight keeps in flight on one
// connection.
const inFlight = 10000

// toolText calls tool name (no arguments) on s and returns the result's
// first text block; s is a Conduit or a raw session.
func toolText(ctx context.Context, s session, name string) (string, error) {
	switch s := s.(type) {
	case *conduitSession:
		res, err := s.c.CallTool(ctx, name, nil)
		if err != nil {
			return "", err
		}
		if res.Failed() || len(res.Content) == 0 {
			return "", fmt.Errorf("%s: failed or empty result", name)
		}
		return res.Content[0].Text, nil
	case *rawSession:
		res, err := s.callTool(ctx, name, map[string]any{})
		if err != nil {
			return "", err
		}
		if len(res.Content) == 0 {
			return "", fmt.Errorf("%s: empty result", name)
		}
		return res.Content[0].Text, nil
	}
	return "", fmt.Errorf("no tool calls for %T", s)
}

// memSample is the process's live heap and goroutine stacks after a GC.
type memSample struct {
	heap, stack uint64
	goroutines  int
}

func sampleMem() memSample {
	runtime.GC()
	runtime.GC() // a second cycle empties the sync.Pool victim caches
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return memSample{heap: ms.HeapAlloc, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
}

func perCall(after, before uint64) string {
	d := int64(after) - int64(before)
	return fmt.Sprintf("%+d B (%+.0f B per call)", d, float64(d)/inFlight)
}

// TestManyCallsInFlight keeps 10,000 calls in flight on one connection
// (stdio and WebSocket, both eras; Conduit and the raw floor) and reports
// the client's memory per call in flight, its memory once they all
// returned, and its goroutines after Close. The rawserver withholds the
// answers of its hold tool until a release call; its held tool says how
// many it withholds, so the measurement is taken with all 10,000 requests
// received by the server. It checks that every call returns, that the
// memory of the calls is given back once they returned (within a quarter
// of what they held) and that the goroutines are back to the baseline
// after Close (goleak in TestMain checks the rest); the figures are in
// the log (go test -v -run TestManyCallsInFlight ./bench).
func TestManyCallsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 calls in flight; skipped in -short mode")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	warmGoroutines()
	for _, tg := range []target{{foreign.Raw, foreign.Stdio}, {foreign.Raw, foreign.WebSocket}} {
		ep := startTarget(t, tg, foreign.Options{})
		for _, c := range clients {
			if c.name != "conduit" && c.name != "raw" {
				continue
			}
			for _, e := range []era{legacyEra, modernEra} {
				t.Run(fmt.Sprintf("%s/%s-%s", c.name, tg.tr, e), func(t *testing.T) {
					manyCallsInFlight(ctx, t, c, ep, e)
				})
			}
		}
	}
}

// warmGoroutines runs inFlight goroutines at once and lets them end: the
// runtime keeps the descriptors of ended goroutines for reuse and never
// frees them, which would otherwise show as memory kept by the first
// measurement.
func warmGoroutines() {
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() { <-release })
	}
	close(release)
	wg.Wait()
}

func manyCallsInFlight(ctx context.Context, t *testing.T, c clientImpl, ep endpoint, e era) {
	base := sampleMem()
	s, err := c.connect(ctx, ep, e)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	closed := false
	defer func() {
		if !closed {
			s.close()
		}
	}()
	if _, err := toolText(ctx, s, "held"); err != nil {
		t.Fatalf("warm-up: %v", err)
	}
	before := sampleMem()

	errs := make(chan error, inFlight)
	var wg sync.WaitGroup
	for range inFlight {
		wg.Go(func() {
			if txt, err := toolText(ctx, s, "hold"); err != nil || txt != "released" {
				errs <- fmt.Errorf("hold: %q, %v", txt, err)
			}
		})
	}
	// Bounded wait until the server holds every call.
	held := 0
	for i := 0; i < 6000 && held < inFlight; i++ {
		txt, err := toolText(ctx, s, "held")
		if err != nil {
			t.Fatalf("held: %v", err)
		}
		if held, _ = strconv.Atoi(txt); held < inFlight {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if held < inFlight {
		t.Fatalf("the server holds %d calls, want %d", held, inFlight)
	}
	peak := sampleMem()
	if _, err := toolText(ctx, s, "release"); err != nil {
		t.Fatalf("release: %v", err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	after := sampleMem()
	if err := s.close(); err != nil {
		t.Errorf("close: %v", err)
	}
	closed = true
	end := sampleMem()
	for i := 0; i < 500 && end.goroutines > base.goroutines; i++ {
		time.Sleep(10 * time.Millisecond)
		end = sampleMem()
	}

	t.Logf("in flight: heap %s, stacks %s (the %d callers' own stacks included), goroutines %+d",
		perCall(peak.heap, before.heap), perCall(peak.stack, before.stack), inFlight, peak.goroutines-before.goroutines)
	t.Logf("all returned: heap %s, stacks %s, goroutines %+d",
		perCall(after.heap, before.heap), perCall(after.stack, before.stack), after.goroutines-before.goroutines)
	t.Logf("after Close: heap %+d B, goroutines %d (baseline before connect %d)",
		int64(end.heap)-int64(base.heap), end.goroutines, base.goroutines)

	grown := int64(peak.heap) - int64(before.heap)
	if kept := int64(after.heap) - int64(before.heap); grown > 0 && kept > grown/4 {
		t.Errorf("%d B of the %d B the calls held are still live after they returned", kept, grown)
	}
	if end.goroutines > base.goroutines {
		t.Errorf("%d goroutines after Close, %d before connect", end.goroutines, base.goroutines)
	}
}
