package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/host"
)

// slowServer is a config entry running the slow-starting server, which
// logs its start and the end of its start to logPath.
func slowServer(logPath string, sleep time.Duration, flags ...string) map[string]any {
	args := append([]string{"-log", logPath, "-sleep", sleep.String()}, flags...)
	return map[string]any{"command": slowserverBin, "args": args}
}

// slowOpts bounds each connection attempt by timeout and caps the
// servers starting at once; the era probe keeps the client's default
// bound (a slow server reads its first message late).
func slowOpts(timeout time.Duration, maxStarting int) *host.Options {
	return &host.Options{
		Server: func(host.ServerConfig) host.ServerOptions {
			return host.ServerOptions{ConnectTimeout: timeout}
		},
		Reconnect:   host.Reconnect{InitialInterval: 50 * time.Millisecond, MaxInterval: 200 * time.Millisecond},
		MaxStarting: maxStarting,
	}
}

// startSpan is one process's start, from the slow server's log.
type startSpan struct {
	pid       string
	start, up int64 // unix nanoseconds; up is 0 if it never came up
}

// startSpans reads the slow servers' log: one span per process.
func startSpans(t *testing.T, path string) []startSpan {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var spans []startSpan
	idx := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("log line %q", line)
		}
		at, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		switch f[0] {
		case "start":
			idx[f[1]] = len(spans)
			spans = append(spans, startSpan{pid: f[1], start: at})
		case "up":
			spans[idx[f[1]]].up = at
		}
	}
	return spans
}

// maxStarting is the largest number of processes that were starting (a
// span from "start" to "up") at one instant, counted on the servers'
// side.
func maxStarting(spans []startSpan) int {
	type edge struct {
		at    int64
		delta int
	}
	var edges []edge
	for _, s := range spans {
		end := s.up
		if end == 0 {
			end = 1<<63 - 1
		}
		edges = append(edges, edge{s.start, +1}, edge{end, -1})
	}
	// Ends before starts at the same instant: touching spans do not overlap.
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return int(min(max(a.at-b.at, -1), 1))
		}
		return a.delta - b.delta
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	return most
}

// TestMaxStarting: with MaxStarting 2, six servers that each take 400ms
// to start never start more than two at a time (counted by the servers),
// all come up, and each one's readiness wakes Changed as it happens.
func TestMaxStarting(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "starts.log")
	servers := map[string]any{}
	for i := range 6 {
		servers[fmt.Sprintf("s%d", i)] = slowServer(logPath, 400*time.Millisecond)
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	opts := slowOpts(20*time.Second, 2)
	h := startHost(t, p, opts)
	var readyCounts []int // the number of ready servers at each wake-up
	sawQueued := false
	waitFor(t, h, "all ready", 60*time.Second, func() bool {
		n := 0
		for _, st := range h.Servers() {
			switch st.State {
			case host.StateReady:
				n++
			case host.StateQueued:
				sawQueued = true
			}
		}
		if len(readyCounts) == 0 || readyCounts[len(readyCounts)-1] != n {
			readyCounts = append(readyCounts, n)
		}
		return n == 6
	})
	spans := startSpans(t, logPath)
	if len(spans) != 6 {
		t.Errorf("%d processes started, want 6", len(spans))
	}
	if got := maxStarting(spans); got > 2 {
		t.Errorf("%d servers were starting at once, want at most MaxStarting = 2", got)
	}
	if !sawQueued {
		t.Errorf("no server was ever %v", host.StateQueued)
	}
	// Six servers come up in at least three waves of at most two: the
	// host reports readiness as servers come up, not all at the end.
	if len(readyCounts) < 4 {
		t.Errorf("ready counts seen at each change: %v; want each wave reported", readyCounts)
	}
	for _, st := range h.Servers() {
		if st.Attempts != 1 || st.Connects != 1 {
			t.Errorf("%s: %d attempts, %d connects; want 1, 1", st.Name, st.Attempts, st.Connects)
		}
	}
}

// TestConnectTimeoutFromOwnStart: with one start slot, four servers that
// each take 1s to start come up one after another in about 4s; each
// one's 3s ConnectTimeout counts from its own start (when it got the
// slot), so none times out, though the last starts after 3s.
func TestConnectTimeoutFromOwnStart(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "starts.log")
	servers := map[string]any{}
	for i := range 4 {
		servers[fmt.Sprintf("s%d", i)] = slowServer(logPath, time.Second)
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	opts := slowOpts(3*time.Second, 1)
	opts.Reconnect.Disabled = true
	h := startHost(t, p, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.Servers() {
		if st.State != host.StateReady || st.Attempts != 1 {
			t.Errorf("%s: %v after %d attempts (%v); want ready at the first", st.Name, st.State, st.Attempts, st.Err)
		}
	}
	spans := startSpans(t, logPath)
	if got := maxStarting(spans); got > 1 {
		t.Errorf("%d servers were starting at once, want 1", got)
	}
	if first, last := spans[0].start, spans[len(spans)-1].start; time.Duration(last-first) < 3*time.Second {
		t.Errorf("the last server started %v after the first; want them one after another", time.Duration(last-first))
	}
}

// TestHealThroughCap: a stdio server that crashes is started again by its
// client (a heal); the new process takes a start slot like any other, so
// with MaxStarting 1 it never starts while another server is starting,
// and the heal is counted in the server's status. The crash must come
// while other servers are still starting: servers get
// their first slot in the order of their names, so the crashing server,
// named first, is up while the others still wait or start.
func TestHealThroughCap(t *testing.T) {
	if !healThroughCap(t) {
		t.Fatal("the crash came after every other server had started; nothing competed with its restart")
	}
}

// healThroughCap runs TestHealThroughCap; false if the crash came after
// every other server had started.
func healThroughCap(t *testing.T) bool {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "starts.log")
	servers := map[string]any{
		"a-crashy": slowServer(logPath, 0, "-era", "legacy",
			"-crash-on", "tools/call", "-crash-marker", filepath.Join(dir, "crashed")),
	}
	for i := range 2 {
		// Longer than the client takes to restart a crashed process.
		servers[fmt.Sprintf("s%d", i)] = slowServer(logPath, 3*time.Second)
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, slowOpts(20*time.Second, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	waitFor(t, h, "a-crashy listed", 30*time.Second, func() bool {
		_, ok := h.Tool("a-crashy__echo")
		return ok
	})
	competed := false
	for _, st := range h.Servers() {
		competed = competed || st.State == host.StateQueued || st.State == host.StateConnecting
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := h.CallTool(ctx, "a-crashy__echo", map[string]any{"text": "boom"}); err == nil {
		t.Errorf("CallTool on a crashing server succeeded")
	}
	waitFor(t, h, "healed and all ready", 60*time.Second, func() bool {
		st, _ := h.Server("a-crashy")
		n := 0
		for _, st := range h.Servers() {
			if st.State == host.StateReady {
				n++
			}
		}
		return st.Heals == 1 && n == 3
	})
	st, _ := h.Server("a-crashy")
	if st.Connects != 1 || st.State != host.StateReady {
		t.Errorf("a-crashy: %v, %d host connects; want ready, 1 (the client healed it)", st.State, st.Connects)
	}
	if res, err := h.CallTool(ctx, "a-crashy__echo", map[string]any{"text": "back"}); err != nil || res.Content[0].Text != "back" {
		t.Errorf("CallTool after the heal = %+v, %v", res, err)
	}
	spans := startSpans(t, logPath)
	if len(spans) != 4 {
		t.Errorf("%d processes started, want 4 (three servers and one restart)", len(spans))
	}
	if got := maxStarting(spans); got > 1 {
		t.Errorf("%d servers were starting at once, want 1: the restart took no slot", got)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	return competed
}

// TestStartsInNameOrder: with one start slot, servers start for the first
// time in the order of their names, whatever the order of the
// configuration.
func TestStartsInNameOrder(t *testing.T) {
	dir := t.TempDir()
	names := []string{"c", "a", "d", "b"}
	servers := map[string]any{}
	for _, n := range names {
		servers[n] = slowServer(filepath.Join(dir, n+".log"), 100*time.Millisecond)
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	h := startHost(t, p, slowOpts(10*time.Second, 1))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	var prev int64
	for _, n := range []string{"a", "b", "c", "d"} {
		spans := startSpans(t, filepath.Join(dir, n+".log"))
		if len(spans) != 1 {
			t.Fatalf("%s started %d times, want 1", n, len(spans))
		}
		if spans[0].start < prev {
			t.Errorf("%s started before the server named before it", n)
		}
		prev = spans[0].start
	}
}

// TestQueuedClose: Close ends servers that wait for a start slot at once.
func TestQueuedClose(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "starts.log")
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"a": slowServer(logPath, 10*time.Second),
		"b": slowServer(logPath, 10*time.Second),
	}})
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, &host.Options{MaxStarting: 1})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, h, "one queued", 10*time.Second, func() bool {
		return state(h, "a") == host.StateQueued || state(h, "b") == host.StateQueued
	})
	_, err = h.Client("a")
	if !errors.Is(err, host.ErrNotReady) {
		t.Errorf("Client(a) while starting = %v, want ErrNotReady", err)
	}
	if err := h.Close(); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.Servers() {
		if st.State != host.StateClosed {
			t.Errorf("%s: %v after Close", st.Name, st.State)
		}
	}
}

// TestReconnectThroughCap: a server that keeps failing is reconnected
// through the start slots too: with MaxStarting 1, while another server
// holds the slot for its 3s start, the failing one waits queued and makes
// no attempt (its backoff alone would allow one every 200ms). This needs
// a slow server starting while the failing one has failed at least once
// (its attempts, not its Failed state, which a loaded machine may pass
// between two looks); the order of the first starts is not fixed, so a
// run where every slow server went first is tried again (at most three
// runs).
func TestReconnectThroughCap(t *testing.T) {
	for range 3 {
		if reconnectThroughCap(t) {
			return
		}
	}
	t.Fatal("the failing server started after every slow one in three runs")
}

func reconnectThroughCap(t *testing.T) bool {
	logPath := filepath.Join(t.TempDir(), "starts.log")
	servers := map[string]any{"missing": map[string]any{"command": filepath.Join(t.TempDir(), "no-such-server")}}
	for i := range 3 {
		servers[fmt.Sprintf("slow%d", i)] = slowServer(logPath, 3*time.Second)
	}
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": servers})
	cfg, err := host.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.Start(cfg, slowOpts(20*time.Second, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	slow := "" // a slow server holding the slot after missing failed
	waitFor(t, h, "a slow server starting after missing failed", 30*time.Second, func() bool {
		m, _ := h.Server("missing")
		failed := m.Attempts > 0 && m.State != host.StateConnecting
		ready := 0
		for _, st := range h.Servers() {
			if st.State == host.StateConnecting && st.Name != "missing" && failed {
				slow = st.Name
				return true
			}
			if st.State == host.StateReady {
				ready++
			}
		}
		return ready == 3
	})
	if slow == "" {
		return false
	}
	// Until it is ready, missing makes no attempt (read missing first:
	// an attempt it made after slow was seen starting is one made while
	// slow held the only slot).
	before, _ := h.Server("missing")
	queued := false
	waitFor(t, h, slow+" ready", 30*time.Second, func() bool {
		m, _ := h.Server("missing")
		if state(h, slow) != host.StateConnecting {
			return true
		}
		queued = queued || m.State == host.StateQueued
		if m.Attempts != before.Attempts {
			t.Errorf("missing made attempt %d while %s held the only start slot", m.Attempts, slow)
			return true
		}
		return false
	})
	if !queued {
		t.Errorf("missing was never seen queued while %s started", slow)
	}
	if err := h.Close(); err != nil {
		t.Error(err)
	}
	return true
}

// TestHealDuringFirstListing: with one start slot, a stdio server that
// crashes on its first tools/list, while its supervisor still holds the
// slot for that first listing, is started again by its client (a heal)
// at once: the heal never waits for the slot its own server holds, so
// the first listing ends with the new process's tools instead of running
// out its ListTimeout.
func TestHealDuringFirstListing(t *testing.T) {
	dir := t.TempDir()
	logPath := filepath.Join(dir, "starts.log")
	p := writeConfig(t, "mcp.json", map[string]any{"mcpServers": map[string]any{
		"crashy": slowServer(logPath, 0, "-era", "legacy",
			"-crash-on", "tools/list", "-crash-marker", filepath.Join(dir, "crashed")),
	}})
	opts := slowOpts(20*time.Second, 1)
	opts.ListTimeout = 5 * time.Second
	h := startHost(t, p, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	st, _ := h.Server("crashy")
	if st.State != host.StateReady || st.Err != nil || st.Tools == 0 {
		t.Errorf("crashy after its first attempt: %v, %d tools, error %v; want ready with its tools listed", st.State, st.Tools, st.Err)
	}
	if spans := startSpans(t, logPath); len(spans) != 2 {
		t.Errorf("%d processes started, want 2 (the server and its restart)", len(spans))
	}
}
