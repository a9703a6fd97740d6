package main

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/conduitmcp/conduit/host"
	"github.com/conduitmcp/conduit/protocol"
)

// liveRows splits what a live view drew on a terminal into the lines it
// drew in place (each after "\r\x1b[K").
func liveRows(out string) []string {
	return strings.Split(out, "\r\x1b[K")[1:]
}

// checkFits reports a drawn line that spans rows or does not fit in
// cols-1 columns ("界" is two columns wide, every other character here
// one).
func checkFits(t *testing.T, what, line string, cols int) {
	t.Helper()
	if w := utf8.RuneCountInString(line) + strings.Count(line, "界"); w >= cols || strings.Contains(line, "\n") {
		t.Errorf("%s: live line of %d columns on a terminal %d wide:\n%q", what, w, cols, line)
	}
}

// TestLiveLinesFit: a live line (the progress bar with the server's
// message; the servers coming up, with the name of the slowest) is cut
// to the terminal's width. A line that wraps is redrawn only from its
// last row ("\r", erase the line), so each redraw would leave the rows
// above it on the screen: a server's long progress message would fill
// the terminal with copies.
func TestLiveLinesFit(t *testing.T) {
	const cols = 40
	width := func() int { return cols }
	long := strings.Repeat("a long message ", 400) + "\x1b[2J"
	wide := strings.Repeat("界", 100)
	total := 10.0

	var b strings.Builder
	pv := newProgressView(newTermWriter(&b), true, width)
	pv.update(protocol.ProgressParams{Progress: 1, Total: &total, Message: long})
	pv.update(protocol.ProgressParams{Progress: 2, Total: &total, Message: wide})
	pv.update(protocol.ProgressParams{Progress: 3, Message: "ok"})
	rows := liveRows(b.String())
	if len(rows) != 3 {
		t.Fatalf("progress: %d lines drawn, want 3:\n%q", len(rows), b.String())
	}
	for _, row := range rows {
		checkFits(t, "progress", row, cols)
	}
	if want := "[---#--------------------------] 3 ok"; rows[2] != want {
		t.Errorf("progress: a short line drawn as %q, want %q", rows[2], want)
	}

	b.Reset()
	now := time.Now()
	v := newStartView(newTermWriter(&b), true, now, width)
	v.update([]host.ServerStatus{
		{Name: strings.Repeat("s", 5000), State: host.StateConnecting, Since: now.Add(-time.Second)},
		{Name: "b", State: host.StateConnecting, Since: now},
	}, now)
	v.update([]host.ServerStatus{{Name: wide, State: host.StateConnecting, Since: now}}, now)
	for _, row := range liveRows(b.String()) {
		checkFits(t, "servers starting", row, cols)
	}
}
