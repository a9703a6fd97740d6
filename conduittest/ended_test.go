package conduittest_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

// TestCallerEndedOutcome: a call that its caller ends without an answer
// (its context, a request timeout, Close) says whether the server may have
// run it, as a lost call does. Written and unanswered (the server holds
// it): the error matches ErrOutcomeUnknown beside what ended it. Never
// written: it matches ErrNotSent; on a transport whose connection the
// client holds, the call waits for a reconnection whose handshake the
// server never answers; on Streamable HTTP, its POST's connection is
// still being made. On every transport, in both eras.
func TestCallerEndedOutcome(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns servers")
	}
	ends := []struct {
		name string
		// call makes the call and ends it its way; it returns the
		// error and whether it matches what ended the call.
		call func(t *testing.T, c *client.Client) (error, bool)
	}{
		{"context", func(t *testing.T, c *client.Client) (error, bool) {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := c.CallTool(ctx, "echo", map[string]any{"text": "charge"})
			return err, errors.Is(err, context.DeadlineExceeded)
		}},
		{"request-timeout", func(t *testing.T, c *client.Client) (error, bool) {
			_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "charge"}, client.WithTimeout(300*time.Millisecond))
			var ce *client.Error
			return err, errors.As(err, &ce) && ce.Kind == client.KindTimeout
		}},
		{"close", func(t *testing.T, c *client.Client) (error, bool) {
			go func() {
				time.Sleep(300 * time.Millisecond)
				c.Close()
			}()
			_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "charge"})
			return err, errors.Is(err, client.ErrClosed)
		}},
	}
	for _, tr := range mTransports {
		for _, era := range tr.eras {
			for _, end := range ends {
				for _, written := range []bool{true, false} {
					name := tr.name + "/" + era.String() + "/" + end.name + "/" + map[bool]string{true: "written", false: "not-written"}[written]
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						srv := conduittest.NewServer(t, conduittest.WithEra(era))
						var clog logBuffer
						opts := append(mOptions(era, client.ReplayNone, new(eventLog)),
							client.WithLogger(slog.New(slog.NewTextHandler(&clog, &slog.HandlerOptions{Level: slog.LevelDebug}))),
							// reconnects long enough for the call to wait
							client.WithRetry(client.RetryPolicy{MaxAttempts: 1000, InitialInterval: 20 * time.Millisecond, MaxInterval: 50 * time.Millisecond, MaxElapsed: time.Minute, ProbeTimeout: time.Minute}))
						var hold *holdDialer
						ht := &http.Transport{}
						if !tr.stream {
							hold = newHoldDialer(t)
							ht.DialContext = hold.dial
							t.Cleanup(ht.CloseIdleConnections)
							opts = append(opts, client.WithHTTPClient(&http.Client{Transport: ht}))
						}
						c := connect(t, srv, tr.name, opts...)
						switch {
						case written:
							if err := srv.SetFaults(conduittest.FaultSilent.On("tools/call").Times(1)); err != nil {
								t.Fatal(err)
							}
						case hold != nil:
							if err := c.Ping(testCtx(t)); err != nil { // the legacy initialized answered
								t.Fatal(err)
							}
							hold.on.Store(true)
							ht.CloseIdleConnections() // the call's POST dials
						default:
							// The server exits and what the client reconnects to
							// never answers its handshake.
							if err := srv.SetFaults(conduittest.FaultExit.On("tools/call").Times(1),
								conduittest.FaultSilent.On("initialize"), conduittest.FaultSilent.On("server/discover")); err != nil {
								t.Fatal(err)
							}
							_, _ = c.CallTool(testCtx(t), "add", map[string]any{"a": 1, "b": 2}) // lost: not replayed (ReplayNone)
							waitLog(t, &clog, "to=reconnecting")
						}
						err, ended := end.call(t, c)
						if !ended {
							t.Errorf("CallTool = %v, want the error of what ended it", err)
						}
						if errors.Is(err, client.ErrOutcomeUnknown) != written || errors.Is(err, client.ErrNotSent) == written {
							t.Errorf("CallTool = %v; matches ErrOutcomeUnknown %v, ErrNotSent %v; want %v, %v",
								err, errors.Is(err, client.ErrOutcomeUnknown), errors.Is(err, client.ErrNotSent), written, !written)
						}
						if n := srv.Executions("echo"); n != 0 {
							t.Errorf("echo ran %d times, want 0", n)
						}
						if hold != nil && !written && end.name != "close" {
							// Nothing to cancel: the server never had it. A
							// later request shows what the client sent since.
							time.Sleep(100 * time.Millisecond)
							if err := c.Ping(testCtx(t)); err != nil {
								t.Fatalf("Ping: %v", err)
							}
							if n := srv.Count("notifications/cancelled"); n != 0 {
								t.Errorf("the server got %d notifications/cancelled for a request it never had", n)
							}
						}
						if t.Failed() {
							t.Logf("client log:\n%s", clog.String())
						}
					})
				}
			}
		}
	}
}

// holdDialer holds the first dial after on is set until its context ends
// (a connection still being made) or the test does (net/http goes on
// dialling after the request that asked for it gave up); the next dials
// go through.
type holdDialer struct {
	on  atomic.Bool
	end chan struct{}
}

func newHoldDialer(t *testing.T) *holdDialer {
	h := &holdDialer{end: make(chan struct{})}
	t.Cleanup(func() { close(h.end) })
	return h
}

func (h *holdDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if h.on.CompareAndSwap(true, false) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-h.end:
			return nil, errors.New("test: ended")
		}
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// waitLog waits until the client's log has a line containing s.
func waitLog(t *testing.T, l *logBuffer, s string) {
	t.Helper()
	for range 1000 {
		if strings.Contains(l.String(), s) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("the client's log has no %q:\n%s", s, l.String())
}
