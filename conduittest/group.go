package conduittest

import (
	"io"
	"sync"
)

// group tracks the goroutines of a [Server] or [Replay] and the
// connections they serve, so that Close can end the connections and wait
// for the goroutines. The zero value is ready to use.
type group struct {
	mu     sync.Mutex
	closed bool               // guarded by mu
	ends   map[io.Closer]bool // connections being served; guarded by mu
	wg     sync.WaitGroup
}

// goServe runs f on a goroutine that close waits for. When end is not
// nil, it is closed after f returns, or by close if that comes first. It
// reports false (closing end) when the group is closed.
func (g *group) goServe(end io.Closer, f func()) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		if end != nil {
			end.Close()
		}
		return false
	}
	if end != nil {
		if g.ends == nil {
			g.ends = map[io.Closer]bool{}
		}
		g.ends[end] = true
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
		if end != nil {
			end.Close()
			g.mu.Lock()
			delete(g.ends, end)
			g.mu.Unlock()
		}
	}()
	return true
}

// isClosed reports whether shut was called.
func (g *group) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// shut refuses new goroutines and closes the connections being served.
func (g *group) shut() {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	g.closeEnds()
}

// closeEnds closes the connections being served; new ones may follow.
func (g *group) closeEnds() {
	g.mu.Lock()
	ends := make([]io.Closer, 0, len(g.ends))
	for c := range g.ends {
		ends = append(ends, c)
	}
	g.mu.Unlock()
	for _, c := range ends {
		c.Close()
	}
}

// wait waits for every goroutine started by goServe.
func (g *group) wait() { g.wg.Wait() }

// hold adds end to the connections being served, for a connection served
// on a goroutine the group did not start (an HTTP handler's); release
// removes it. hold reports false (closing end) when the group is closed.
func (g *group) hold(end io.Closer) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		end.Close()
		return false
	}
	if g.ends == nil {
		g.ends = map[io.Closer]bool{}
	}
	g.ends[end] = true
	return true
}

func (g *group) release(end io.Closer) {
	g.mu.Lock()
	delete(g.ends, end)
	g.mu.Unlock()
}
