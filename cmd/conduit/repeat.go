package main

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
)

// repeatJSON is call --repeat's --json output.
type repeatJSON struct {
	CallsOK         int            `json:"calls_ok"`
	CallsFailed     int            `json:"calls_failed"`
	Concurrency     int            `json:"concurrency"`
	Era             string         `json:"era"`
	ProtocolVersion string         `json:"protocolVersion"`
	P50ms           float64        `json:"p50_ms"`
	P99ms           float64        `json:"p99_ms"`
	Reconnects      int            `json:"reconnects"`
	Error           map[string]any `json:"error"`
}

// repeatFailure is the error of call --repeat when some calls failed.
type repeatFailure struct {
	failed, total int
	last          error
}

func (e *repeatFailure) Error() string {
	return fmt.Sprintf("%d of %d calls failed; the last: %v", e.failed, e.total, e.last)
}

// runRepeat calls the tool inv.repeat times on c, inv.concurrency at a
// time, and prints the summary.
func runRepeat(ctx context.Context, inv *invocation, c *conn, tool string, args any, opts ...client.CallOption) error {
	n, conc := inv.repeat, min(inv.concurrency, inv.repeat)
	traceBefore := len(c.Negotiated().Trace)
	var (
		mu        sync.Mutex
		latencies []time.Duration // guarded by mu
		failed    int             // guarded by mu
		lastErr   error           // guarded by mu
	)
	jobs := make(chan struct{})
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range jobs {
				start := time.Now()
				res, err := c.CallTool(ctx, tool, args, opts...)
				d := time.Since(start)
				if err == nil && isToolFailure(res) {
					err = &toolError{tool: tool, text: firstText(res.Content)}
				}
				mu.Lock()
				if err != nil {
					failed++
					lastErr = err
				} else {
					latencies = append(latencies, d)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for range n {
		select {
		case jobs <- struct{}{}:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err // interrupted or --timeout: no summary of a partial run
	}

	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	p50, p99 := percentile(latencies, 50), percentile(latencies, 99)
	reconnects := countReconnects(c.Negotiated().Trace, traceBefore)
	if inv.json {
		out := repeatJSON{
			CallsOK: len(latencies), CallsFailed: failed, Concurrency: conc,
			Era: c.Negotiated().Era.String(), ProtocolVersion: c.Negotiated().Version,
			P50ms: ms(p50), P99ms: ms(p99), Reconnects: reconnects,
		}
		if lastErr != nil {
			out.Error = errorJSON(ctx, lastErr)
		}
		inv.jsonErrorWritten = true
		if err := writeJSON(inv.std.out, out); err != nil {
			return err
		}
	} else {
		w := inv.std.out
		fmt.Fprintf(w, "calls:    %d ok, %d failed (%d at a time)\n", len(latencies), failed, conc)
		if len(latencies) > 0 {
			fmt.Fprintf(w, "latency:  p50 %s, p99 %s\n", roundDuration(p50), roundDuration(p99))
		}
		fmt.Fprintf(w, "protocol: %s era, %s\n", c.Negotiated().Era, c.Negotiated().Version)
		if reconnects > 0 {
			fmt.Fprintf(w, "healed:   %d lost connection(s) or session(s), re-established by the client (-v shows how)\n", reconnects)
		}
	}
	if failed > 0 {
		return &repeatFailure{failed: failed, total: n, last: lastErr}
	}
	return nil
}

// countReconnects counts the lost connections (or legacy sessions) the
// session healed since the trace had before steps: each starts with a
// "reconnect" step whose verdict is "reconnect".
func countReconnects(trace []traceStep, before int) int {
	n := 0
	for _, st := range trace[min(before, len(trace)):] {
		if st.Step == "reconnect" && st.Verdict == "reconnect" {
			n++
		}
	}
	return n
}

// percentile returns the nearest-rank p-th percentile of sorted.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100 // ceil(p/100 * n)
	return sorted[max(rank, 1)-1]
}

func ms(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

func roundDuration(d time.Duration) time.Duration {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond)
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Microsecond)
}
