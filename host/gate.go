package host

import (
	"context"
	"runtime"
	"sync"
)

// startFactor times the number of CPUs is the default cap on stdio
// servers starting at once ([Options.MaxStarting]); interop/bench/RESULTS.md
// ("Host at scale") has the measurements behind it.
const startFactor = 2

// defaultMaxStarting is the cap when Options.MaxStarting is 0.
func defaultMaxStarting() int { return max(4, startFactor*runtime.NumCPU()) }

// gate admits at most max holders at once, in the order they asked (a
// server that fails and starts again queues behind those already
// waiting). A nil *gate admits everyone. Waits block on channels.
type gate struct {
	max int

	mu      sync.Mutex
	held    int             // guarded by mu
	waiters []chan struct{} // guarded by mu; closed when the slot is handed over
}

func newGate(max int) *gate {
	if max < 0 {
		return nil
	}
	if max == 0 {
		max = defaultMaxStarting()
	}
	return &gate{max: max}
}

// acquire waits for a slot, or until ctx ends (then it returns ctx.Err()
// and holds nothing). A nil gate returns at once.
func (g *gate) acquire(ctx context.Context) error {
	return g.wait(ctx, g.ask())
}

// ask takes a place in the line: the returned channel is closed once the
// slot is the asker's (at once when one is free). The asker must wait
// for it (wait), which also gives the place up when ctx ends. A nil gate
// returns nil.
func (g *gate) ask() chan struct{} {
	if g == nil {
		return nil
	}
	ch := make(chan struct{})
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.held < g.max {
		g.held++
		close(ch)
		return ch
	}
	g.waiters = append(g.waiters, ch)
	return ch
}

// wait waits until the place ch (from ask) has the slot, or until ctx
// ends (then it returns ctx.Err() and holds nothing). A nil gate returns
// at once.
func (g *gate) wait(ctx context.Context, ch chan struct{}) error {
	if g == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, w := range g.waiters {
		if w == ch {
			g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
			return ctx.Err()
		}
	}
	// The slot was handed over while ctx ended: pass it on.
	g.releaseLocked()
	return ctx.Err()
}

// release gives the slot to the longest waiter, or frees it.
func (g *gate) release() {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.releaseLocked()
}

func (g *gate) releaseLocked() {
	if len(g.waiters) > 0 {
		close(g.waiters[0])
		g.waiters = g.waiters[1:]
		return
	}
	g.held--
}
