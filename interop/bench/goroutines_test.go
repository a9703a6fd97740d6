package bench

import (
	"context"
	"fmt"
	"github.com/conduitmcp/conduit/transport"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/interop/internal/foreign"
)

// settledGoroutines waits (bounded) until the number of goroutines stops
// changing for 50ms and returns it: goroutines that a connect or a close
// started to end (a negotiation step, an idle HTTP connection's reader)
// are not counted as the connection's.
func settledGoroutines() int {
	n := runtime.NumGoroutine()
	for stable, deadline := time.Now(), time.Now().Add(2*time.Second); time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, stable = m, time.Now()
		} else if time.Since(stable) >= 50*time.Millisecond {
			break
		}
	}
	return n
}

// TestGoroutinesPerConnection counts the goroutines a connected client
// keeps while idle, after one call, per library, transport and era (the
// servers are other processes, so every goroutine counted is the
// client's, its HTTP connections' included), and checks that Conduit's
// stay within its documented budget and that every client is back at the
// baseline after Close. -v prints the table.
func TestGoroutinesPerConnection(t *testing.T) {
	// Conduit's budget: the engine's loop, dispatcher and reader, plus what
	// the transport needs (stdio: the child's stdout and stderr readers and
	// its waiter; HTTP: net/http's reader and writer of the one kept-alive
	// connection; WebSocket: the connection's reader and its pinger).
	budget := map[foreign.Transport]int{foreign.Stdio: 6, foreign.HTTP: 5, foreign.WebSocket: 5}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var rows []string
	for _, tg := range []target{{foreign.Raw, foreign.Stdio}, {foreign.Raw, foreign.HTTP}, {foreign.Raw, foreign.WebSocket}} {
		ep := startTarget(t, tg, foreign.Options{})
		for _, c := range clients {
			if !serves(c, tg) {
				continue
			}
			for _, e := range []era{legacyEra, modernEra} {
				http.DefaultClient.CloseIdleConnections()
				transport.CloseIdleConnections()
				base := settledGoroutines()
				s, err := c.connect(ctx, ep, e)
				if err != nil {
					t.Fatalf("%s %s %s: connect: %v", c.name, tg.tr, e, err)
				}
				if err := s.echo(ctx, "x"); err != nil {
					t.Fatalf("%s %s %s: echo: %v", c.name, tg.tr, e, err)
				}
				open := settledGoroutines() - base
				if err := s.close(); err != nil {
					t.Logf("%s %s %s: close: %v", c.name, tg.tr, e, err)
				}
				// The idle connections are the shared pool's, not the
				// client's: flushed as net/http programs do.
				http.DefaultClient.CloseIdleConnections()
				transport.CloseIdleConnections()
				left := settledGoroutines() - base
				rows = append(rows, fmt.Sprintf("| %s | %s | %s | %d | %d |", c.name, tg.tr, e, open, left))
				if c.name == "conduit" {
					if open > budget[tg.tr] {
						t.Errorf("conduit %s %s keeps %d goroutines, budget %d", tg.tr, e, open, budget[tg.tr])
					}
					if left > 0 {
						t.Errorf("conduit %s %s: %d goroutines left after Close", tg.tr, e, left)
					}
				}
			}
		}
	}
	t.Logf("goroutines per connection (idle, after one call), and left after Close:\n| client | transport | era | open | after Close |\n|---|---|---|--:|--:|\n%s", strings.Join(rows, "\n"))
}
