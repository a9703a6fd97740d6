package main

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/host"
)

// TestStartCounts: the live line counts each state and names the server
// that has been starting the longest.
func TestStartCounts(t *testing.T) {
	now := time.Now()
	sts := []host.ServerStatus{
		{Name: "a", State: host.StateReady},
		{Name: "b", State: host.StateConnecting, Since: now.Add(-3 * time.Second)},
		{Name: "c", State: host.StateConnecting, Since: now.Add(-time.Second)},
		{Name: "d", State: host.StateQueued},
		{Name: "e", State: host.StateFailed},
		{Name: "f", State: host.StateDisabled},
	}
	got := countStates(sts, now).String()
	if want := "servers: 1/5 ready, 1 failed, 2 starting, 1 queued; slowest: b (3s)"; got != want {
		t.Errorf("countStates(…).String() = %q, want %q", got, want)
	}
}

// startTestHost starts a host of two test servers and a missing one.
func startTestHost(t *testing.T) *host.Host {
	t.Helper()
	cfg := &host.Config{Servers: []host.ServerConfig{
		{Name: "a", Command: testserverBin},
		{Name: "b", Command: testserverBin},
		{Name: "missing", Command: filepath.Join(t.TempDir(), "no-such-server")},
	}}
	hs, err := host.Start(cfg, &host.Options{Reconnect: host.Reconnect{Disabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hs.Close() })
	return hs
}

// TestWatchStart: without a terminal, each server gets one plain line as
// it comes up or fails, then a summary; on a terminal, a live line is
// redrawn in place and replaced by the summary.
func TestWatchStart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var plain bytes.Buffer
	if err := watchStart(ctx, startTestHost(t), &plain, false, nil); err != nil {
		t.Fatal(err)
	}
	out := plain.String()
	for _, re := range []string{
		`(?m)^conduit: server a ready after \S+ \([12]/3 ready\)$`,
		`(?m)^conduit: server b ready after \S+ \([12]/3 ready\)$`,
		`(?m)^conduit: server missing failed after \S+ \([012]/3 ready\)$`,
		`(?m)^conduit: 2/3 servers ready in \S+ \(1 failed\)\n\z`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("plain output lacks %s:\n%s", re, out)
		}
	}
	if strings.Contains(out, "\r") || strings.Count(out, "\n") != 4 {
		t.Errorf("plain output is not four plain lines:\n%q", out)
	}

	var term bytes.Buffer
	if err := watchStart(ctx, startTestHost(t), &term, true, nil); err != nil {
		t.Fatal(err)
	}
	out = term.String()
	if !strings.HasPrefix(out, "\r\x1b[Kservers: 0/3 ready") || !strings.Contains(out, "\r\x1b[Kconduit: 2/3 servers ready in ") || strings.Count(out, "\n") != 1 {
		t.Errorf("terminal output = %q, want a live line redrawn in place, then the summary", out)
	}
}
