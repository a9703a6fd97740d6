package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/host"
)

// startRedraw is how often the live line of a terminal is redrawn while
// nothing changes (the slowest server's time goes on).
const startRedraw = 500 * time.Millisecond

// startView shows the servers of a config file coming up, on stderr: on a
// terminal one live line redrawn in place ("servers: 3/10 ready, 1
// failed, 2 starting, 4 queued; slowest: x (12s)", cut to the terminal's
// width), otherwise one plain line per server as it comes up or fails.
// Both end with a summary line. It is used from one goroutine.
type startView struct {
	w     io.Writer
	tty   bool
	cols  func() int // the terminal's width, 0 when unknown; nil: unknown
	start time.Time
	done  map[string]bool // servers whose first attempt was reported
	ready int             // how many of them were ready
	drawn bool            // a live line is on the terminal
}

func newStartView(w io.Writer, tty bool, start time.Time, cols func() int) *startView {
	return &startView{w: w, tty: tty, cols: cols, start: start, done: map[string]bool{}}
}

// startCounts tallies servers by what they are doing.
type startCounts struct {
	ready, failed, starting, queued, total int
	slowest                                string        // the server starting the longest
	slowFor                                time.Duration // for how long
}

func countStates(sts []host.ServerStatus, now time.Time) startCounts {
	var c startCounts
	for _, st := range sts {
		switch st.State {
		case host.StateDisabled:
			continue
		case host.StateReady:
			c.ready++
		case host.StateQueued:
			c.queued++
		case host.StateConnecting:
			c.starting++
			if d := now.Sub(st.Since); c.slowest == "" || d > c.slowFor {
				c.slowest, c.slowFor = st.Name, d
			}
		default:
			c.failed++
		}
		c.total++
	}
	return c
}

// String is the live line: "servers: 3/10 ready, 1 failed, 2 starting,
// 4 queued; slowest: x (12s)".
func (c startCounts) String() string {
	parts := []string{fmt.Sprintf("%d/%d ready", c.ready, c.total)}
	for _, p := range []struct {
		n    int
		what string
	}{{c.failed, "failed"}, {c.starting, "starting"}, {c.queued, "queued"}} {
		if p.n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", p.n, p.what))
		}
	}
	s := "servers: " + strings.Join(parts, ", ")
	if c.slowest != "" {
		s += fmt.Sprintf("; slowest: %s (%s)", c.slowest, c.slowFor.Round(time.Second))
	}
	return s
}

// update shows the servers' states at now.
func (v *startView) update(sts []host.ServerStatus, now time.Time) {
	if v.tty {
		writeControl(v.w, "\r\x1b[K")
		fmt.Fprint(v.w, fitLine(termSafe(countStates(sts, now).String()), v.cols))
		v.drawn = true
		return
	}
	total := countStates(sts, now).total
	for _, st := range sts {
		if v.done[st.Name] || st.State != host.StateReady && st.State != host.StateFailed {
			continue
		}
		v.done[st.Name] = true
		if st.State == host.StateReady {
			v.ready++
		}
		fmt.Fprintf(v.w, "conduit: server %s %s after %s (%d/%d ready)\n",
			st.Name, st.State, now.Sub(v.start).Round(100*time.Millisecond), v.ready, total)
	}
}

// finish ends the view with a summary line.
func (v *startView) finish(sts []host.ServerStatus, now time.Time) {
	if !v.tty {
		v.update(sts, now)
	} else if v.drawn {
		writeControl(v.w, "\r\x1b[K")
	}
	c := countStates(sts, now)
	s := fmt.Sprintf("conduit: %d/%d servers ready in %s", c.ready, c.total, now.Sub(v.start).Round(100*time.Millisecond))
	if c.failed > 0 {
		s += fmt.Sprintf(" (%d failed)", c.failed)
	}
	fmt.Fprintln(v.w, s)
}

// watchStart shows hs's servers coming up on w until each has finished
// its first attempt, or ctx ends (then it returns ctx.Err()). tty says w
// is a terminal, cols (nil for unknown) how wide it is.
func watchStart(ctx context.Context, hs *host.Host, w io.Writer, tty bool, cols func() int) error {
	v := newStartView(w, tty, time.Now(), cols)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1) // buffered: the goroutine never blocks on it
	go func() { done <- hs.Wait(ctx) }()
	var redraw <-chan time.Time
	if tty {
		t := time.NewTicker(startRedraw)
		defer t.Stop()
		redraw = t.C
	}
	for {
		changed := hs.Changed()
		v.update(hs.Servers(), time.Now())
		select {
		case err := <-done:
			v.finish(hs.Servers(), time.Now())
			return err
		case <-changed:
		case <-redraw:
		}
	}
}
