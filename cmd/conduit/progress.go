package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/protocol"
)

// barWidth is the number of cells of the live progress bar.
const barWidth = 30

// progressView shows a call's progress notifications on stderr: a live
// bar redrawn in place on a terminal (cut to its width: fitLine), one
// plain line per notification otherwise. Prompts (elicitation) clear the
// bar first so they are not drawn over. It is safe for concurrent use.
type progressView struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	cols  func() int // the terminal's width, 0 when unknown; nil: unknown
	drawn bool       // guarded by mu; a bar is on the current line
	done  bool       // guarded by mu; finish ran: later updates are dropped
}

// newProgressView returns a view drawing on w; tty says w is a terminal,
// cols (nil for unknown) how wide it is.
func newProgressView(w io.Writer, tty bool, cols func() int) *progressView {
	return &progressView{w: w, tty: tty, cols: cols}
}

// update shows one notification. It is called on the client's dispatcher
// goroutine and only writes, so it never blocks for long.
func (p *progressView) update(pp protocol.ProgressParams) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if !p.tty {
		fmt.Fprintln(p.w, "progress: "+progressText(pp))
		return
	}
	writeControl(p.w, "\r\x1b[K")
	fmt.Fprint(p.w, fitLine(termSafe(renderBar(pp)+" "+progressText(pp)), p.cols))
	p.drawn = true
}

// clear erases the bar, if one is drawn.
func (p *progressView) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		writeControl(p.w, "\r\x1b[K")
		p.drawn = false
	}
}

// finish erases the bar and drops later updates: the client may run the
// progress callbacks of the last notifications after the call returned,
// and they must not be drawn over (or after) the result.
func (p *progressView) finish() {
	p.clear()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
}

// progressText is "2/3 (67%) message", "2 message" without a total.
func progressText(pp protocol.ProgressParams) string {
	var b strings.Builder
	b.WriteString(formatNumber(pp.Progress))
	if pp.Total != nil && *pp.Total > 0 {
		fmt.Fprintf(&b, "/%s (%d%%)", formatNumber(*pp.Total), int(100*min(pp.Progress / *pp.Total, 1)))
	}
	if pp.Message != "" {
		b.WriteString(" " + oneLine(pp.Message))
	}
	return b.String()
}

// renderBar draws "[#######-------]"; without a total a spinner-like
// marker moves with the progress value.
func renderBar(pp protocol.ProgressParams) string {
	cells := make([]byte, barWidth)
	for i := range cells {
		cells[i] = '-'
	}
	if pp.Total != nil && *pp.Total > 0 {
		n := int(float64(barWidth) * min(max(pp.Progress / *pp.Total, 0), 1))
		for i := 0; i < n; i++ {
			cells[i] = '#'
		}
	} else {
		// The modulus in float64: a progress past what an int holds converts
		// to a negative int.
		cells[int(math.Mod(max(pp.Progress, 0), barWidth))] = '#'
	}
	return "[" + string(cells) + "]"
}

// formatNumber prints integers without a fraction.
func formatNumber(f float64) string {
	if f == float64(int64(f)) {
		return fmt.Sprintf("%d", int64(f))
	}
	return fmt.Sprintf("%.2f", f)
}
