package bench

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"
)

// BenchmarkConnectPhases is BenchmarkConnect with its two halves timed
// apart (dial-ns/op: connect and negotiate; close-ns/op: Close), the
// goroutines a connect and close starts in the client process
// (goroutines/op, from runtime/metrics; the HTTP servers are other
// processes) and the CPU time the client process spends on it
// (cpu-ns/op, user and system, from getrusage: on two cores, CPU the
// client burns is CPU the server waits for), and the TCP connections its
// HTTP pool dials (dials/op).
func BenchmarkConnectPhases(b *testing.B) {
	matrix(b, 0, func(b *testing.B, c clientImpl, ep endpoint, e era) {
		ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
		defer cancel()
		var dial, cl time.Duration
		sm := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
		metrics.Read(sm)
		g0 := sm[0].Value.Uint64()
		cpu0, dial0 := processCPU(), dials.Load()
		for b.Loop() {
			t0 := time.Now()
			s, err := c.connect(ctx, ep, e)
			if err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := s.close(); err != nil {
				b.Fatal(err)
			}
			dial += t1.Sub(t0)
			cl += time.Since(t1)
		}
		cpu := processCPU() - cpu0
		metrics.Read(sm)
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(dials.Load()-dial0)/float64(b.N), "dials/op")
		b.ReportMetric(float64(sm[0].Value.Uint64()-g0)/float64(b.N), "goroutines/op")
		b.ReportMetric(float64(dial.Nanoseconds())/float64(b.N), "dial-ns/op")
		b.ReportMetric(float64(cl.Nanoseconds())/float64(b.N), "close-ns/op")
	})
}
