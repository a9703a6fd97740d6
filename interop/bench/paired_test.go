package bench

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
)

// BenchmarkConnectPaired is BenchmarkConnect with the clients taking turns
// inside one loop: every iteration connects and closes once with each
// client that reaches the target, in an order that rotates with the
// iteration, and each client's time is reported apart (<client>-ns/op),
// with its ratio to the raw client (<client>/raw), and the part of it
// that Close took (<client>-close-ns/op). The clients of a cell
// share every moment of the run, so a machine that slows down or speeds
// up mid-run changes their ratio less than it does between the
// sub-benchmarks of BenchmarkConnect, which run one after the other; and
// no client runs twice in a row, so none finds its code and data in the
// CPU caches the way a loop of one client's connects does. ns/op is the
// whole iteration (every client once); the allocations are those of all
// the clients together.
//
// BENCH_CLIENTS, a comma-separated list of client names, lets only those
// clients take turns; a name listed twice takes two turns (the second
// reported as <name>-2), which shows what a client gains when its code
// is warm from another client's turn.
func BenchmarkConnectPaired(b *testing.B) {
	cs0, err := pairedClients(os.Getenv("BENCH_CLIENTS"))
	if err != nil {
		b.Fatal(err)
	}
	eps := map[target]endpoint{}
	for _, tg := range targets {
		eps[tg] = startTarget(b, tg, foreign.Options{})
	}
	for _, tg := range targets {
		for _, e := range []era{legacyEra, modernEra} {
			var cs []clientImpl
			for _, c := range rotated(cs0, os.Getenv("BENCH_ROUND")) {
				if serves(c, tg) {
					cs = append(cs, c)
				}
			}
			b.Run(fmt.Sprintf("%s-%s-%s", tg.kind, tg.tr, e), func(b *testing.B) {
				b.ReportAllocs()
				pairedConnects(b, cs, eps[tg], e)
			})
		}
	}
}

// pairedClients returns the clients that list (BENCH_CLIENTS) names, in
// its order, or every client when it is empty.
func pairedClients(list string) ([]clientImpl, error) {
	if list == "" {
		return clients, nil
	}
	var cs []clientImpl
	seen := map[string]int{}
	for _, name := range strings.Split(list, ",") {
		i := slices.IndexFunc(clients, func(c clientImpl) bool { return c.name == name })
		if i < 0 {
			return nil, fmt.Errorf("BENCH_CLIENTS: no client %q", name)
		}
		c := clients[i]
		if seen[name]++; seen[name] > 1 {
			c.name = fmt.Sprintf("%s-%d", name, seen[name])
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func pairedConnects(b *testing.B, cs []clientImpl, ep endpoint, e era) {
	ctx, cancel := context.WithTimeout(context.Background(), benchTimeout)
	defer cancel()
	spent := make([]time.Duration, len(cs))
	closing := make([]time.Duration, len(cs))
	turn := 0
	for b.Loop() {
		for k := range cs {
			i := (turn + k) % len(cs)
			t0 := time.Now()
			s, err := cs[i].connect(ctx, ep, e)
			if err != nil {
				b.Fatalf("%s: %v", cs[i].name, err)
			}
			t1 := time.Now()
			if err := s.close(); err != nil {
				b.Fatalf("%s: close: %v", cs[i].name, err)
			}
			closing[i] += time.Since(t1)
			spent[i] += time.Since(t0)
		}
		turn++
	}
	raw := time.Duration(0)
	for i, c := range cs {
		if c.name == "raw" {
			raw = spent[i]
		}
	}
	for i, c := range cs {
		b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), c.name+"-ns/op")
		b.ReportMetric(float64(closing[i].Nanoseconds())/float64(b.N), c.name+"-close-ns/op")
		if raw > 0 && c.name != "raw" {
			b.ReportMetric(float64(spent[i])/float64(raw), c.name+"/raw")
		}
	}
}

func TestPairedClients(t *testing.T) {
	all, err := pairedClients("")
	if err != nil || len(all) != len(clients) {
		t.Fatalf("pairedClients(\"\") = %d clients, %v; want all %d", len(all), err, len(clients))
	}
	cs, err := pairedClients("conduit,raw,conduit")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range cs {
		names = append(names, c.name)
	}
	if got := strings.Join(names, ","); got != "conduit,raw,conduit-2" {
		t.Errorf("names = %s, want conduit,raw,conduit-2", got)
	}
	if _, err := pairedClients("conduit,nope"); err == nil {
		t.Error("an unknown client name was accepted")
	}
}
