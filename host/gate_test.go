package host

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"testing/synctest"
)

// TestGate: at most max holders; waiters get slots in the order they
// asked; a waiter whose context ends leaves the queue, and a slot handed
// to it as its context ended goes to the next waiter.
func TestGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGate(2)
		ctx := context.Background()
		g.acquire(ctx)
		g.acquire(ctx)
		var order []int
		cancelCtx, cancel := context.WithCancel(ctx)
		gone := make(chan error, 1)
		go func() { gone <- g.acquire(cancelCtx) }() // asks first, gives up
		synctest.Wait()
		for i := range 3 {
			go func() {
				if err := g.acquire(ctx); err != nil {
					t.Errorf("acquire = %v", err)
				}
				order = append(order, i)
			}()
			synctest.Wait() // each asks after the one before
		}
		cancel()
		if err := <-gone; !errors.Is(err, context.Canceled) {
			t.Errorf("acquire with a canceled context = %v, want context.Canceled", err)
		}
		for range 3 {
			g.release()
			synctest.Wait()
		}
		if len(order) != 3 || order[0] != 0 || order[1] != 1 || order[2] != 2 {
			t.Errorf("slots went to %v, want [0 1 2]", order)
		}
		if g.held != 2 || len(g.waiters) != 0 {
			t.Errorf("held %d, %d waiting; want 2, 0", g.held, len(g.waiters))
		}
	})
	if g := newGate(-1); g != nil || g.acquire(context.Background()) != nil {
		t.Errorf("newGate(-1) = %v, want no cap", g)
	}
	// The default, as Options.MaxStarting and README.md give it: twice
	// the CPUs, at least 4.
	if g, want := newGate(0), max(4, 2*runtime.NumCPU()); g.max != want {
		t.Errorf("default cap %d, want %d", g.max, want)
	}
}
