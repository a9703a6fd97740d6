//go:build unix

package bench

import (
	"context"
	"github.com/conduitmcp/conduit/transport"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
)

// idleClients is how many clients of one library BenchmarkIdle keeps
// connected at once.
const idleClients = 10

// idleWindow is how long BenchmarkIdle watches the idle clients:
// BENCH_IDLE (a time.Duration) or 10s.
func idleWindow() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("BENCH_IDLE")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Second
}

// schedSamples returns the number of scheduling events the runtime
// sampled so far: the count of /sched/latencies:seconds, to which every
// goroutine adds one sample for every 8th time it is made runnable and
// runs (a wake-up). 8× a difference estimates the wake-ups in between.
func schedSamples() uint64 {
	s := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	metrics.Read(s)
	var n uint64
	for _, c := range s[0].Value.Float64Histogram().Counts {
		n += c
	}
	return n
}

// inSyscalls returns how many goroutines are in a system call (or cgo)
// now: each holds an OS thread of its own while it is.
func inSyscalls() int64 {
	s := []metrics.Sample{{Name: "/sched/goroutines/not-in-go:goroutines"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// cpuTime returns the CPU time (user + system) this process used so far;
// the servers are other processes and are not counted.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// heapInUse returns the live heap after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// idleSample is what a window of idleness cost: estimated wake-ups and
// CPU time.
type idleSample struct {
	wakeups float64
	cpu     time.Duration
}

// watchIdle measures a window of w in which nothing of the benchmark's
// runs.
func watchIdle(w time.Duration) idleSample {
	s0, c0 := schedSamples(), cpuTime()
	time.Sleep(w)
	return idleSample{wakeups: 8 * float64(schedSamples()-s0), cpu: cpuTime() - c0}
}

// writeIdleProfiles writes the heap profile (in-use objects of the idle
// clients) and the goroutine dump (debug=2: every goroutine's stack and
// wait reason, the audit of what could wake up) of the running cell into
// dir.
func writeIdleProfiles(b *testing.B, dir string) {
	name := filepath.Join(dir, strings.ReplaceAll(b.Name(), "/", "_"))
	for _, p := range []struct {
		kind, ext string
		debug     int
	}{{"heap", ".heap", 0}, {"goroutine", ".goroutines.txt", 2}} {
		f, err := os.Create(name + p.ext)
		if err != nil {
			b.Fatal(err)
		}
		err = pprof.Lookup(p.kind).WriteTo(f, p.debug)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkIdle measures what an idle connected client costs, per
// connection, beside the other libraries: idleClients clients of one
// library connect to the raw server (stdio: one server process each;
// HTTP and WebSocket: one server; a library without a WebSocket transport
// skips those cells), each makes one call, and then nothing happens. It
// reports the heap (after GC), the goroutines they hold and the OS
// threads held by those of them blocked in a system call, per client,
// against the baseline before they connected (net/http's idle pooled
// connections included), and over an idle window (BENCH_IDLE, default
// 10s) the wake-ups of this process per client and minute (estimated from
// the scheduler's sampled latencies, less those of the same window
// without clients) and the CPU time per client and minute. Run with
// -test.benchtime 1x: one measurement per cell. BENCH_IDLE_PROFILES=dir
// writes each cell's heap profile and goroutine dump there.
func BenchmarkIdle(b *testing.B) {
	w := idleWindow()
	for _, tg := range []target{{foreign.Raw, foreign.Stdio}, {foreign.Raw, foreign.HTTP}, {foreign.Raw, foreign.WebSocket}} {
		ep := startTarget(b, tg, foreign.Options{})
		for _, e := range []era{legacyEra, modernEra} {
			for _, c := range rotated(clients, os.Getenv("BENCH_ROUND")) {
				if !serves(c, tg) {
					continue
				}
				b.Run(c.name+"/"+string(tg.kind)+"-"+string(tg.tr)+"-"+string(e), func(b *testing.B) {
					for b.Loop() {
						measureIdle(b, c, ep, e, w)
					}
				})
			}
		}
	}
}

func measureIdle(b *testing.B, c clientImpl, ep endpoint, e era, w time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	http.DefaultClient.CloseIdleConnections()
	transport.CloseIdleConnections()
	base := watchIdle(w)
	heap0, g0 := heapInUse(), settledGoroutines()
	t0 := inSyscalls()
	sessions := make([]session, 0, idleClients)
	defer func() {
		for _, s := range sessions {
			_ = s.close()
		}
		http.DefaultClient.CloseIdleConnections()
		transport.CloseIdleConnections()
	}()
	for range idleClients {
		s, err := c.connect(ctx, ep, e)
		if err != nil {
			b.Fatalf("connect: %v", err)
		}
		sessions = append(sessions, s)
		if err := s.echo(ctx, "x"); err != nil {
			b.Fatalf("echo: %v", err)
		}
	}
	g1 := settledGoroutines()
	t1 := inSyscalls()
	heap1 := heapInUse()
	if dir := os.Getenv("BENCH_IDLE_PROFILES"); dir != "" {
		writeIdleProfiles(b, dir)
	}
	idle := watchIdle(w)
	perMin := float64(time.Minute) / float64(w) / idleClients
	b.ReportMetric(float64(int64(heap1)-int64(heap0))/idleClients, "heap-B/conn")
	b.ReportMetric(float64(g1-g0)/idleClients, "goroutines/conn")
	b.ReportMetric(float64(t1-t0)/idleClients, "threads/conn")
	b.ReportMetric((idle.wakeups-base.wakeups)*perMin, "wakeups/min/conn")
	b.ReportMetric(float64(idle.cpu-base.cpu)/float64(time.Microsecond)*perMin, "cpu-µs/min/conn")
}
