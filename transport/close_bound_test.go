package transport_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// closeWithin closes c, fails unless Close returns within bound, and
// returns its error.
func closeWithin(t *testing.T, c transport.Conn, bound time.Duration) error {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- c.Close() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(bound + testTimeout):
		t.Fatalf("Close() did not return within %v", bound+testTimeout)
	}
	if took := time.Since(start); took > bound {
		t.Errorf("Close() took %v; its bound is %v", took, bound)
	}
	return err
}

// blockedWrites starts writing large messages to c until Write blocks,
// and returns a channel that receives the error of the Write that was
// blocked once it returns.
func blockedWrites(t *testing.T, c transport.Conn) <-chan error {
	t.Helper()
	big := request(t, 1, "echo", map[string]string{"pad": strings.Repeat("x", 256<<10)})
	errc := make(chan error, 1)
	go func() {
		for {
			if err := c.Write(context.Background(), big); err != nil {
				errc <- err
				return
			}
		}
	}()
	return errc
}

// TestStdioCloseBoundedByLadder: a server that stops reading its stdin
// (with a Write blocked on the full pipe), and one that stops answering
// and ignores both stdin's end and SIGTERM: Close returns within
// TerminateDelay + KillDelay (plus scheduling slack) and fails the blocked
// Write.
func TestStdioCloseBoundedByLadder(t *testing.T) {
	const delay = 200 * time.Millisecond
	for _, mode := range []string{"no-read", "ignore-term"} {
		t.Run(mode, func(t *testing.T) {
			s := testServer(t, mode)
			s.TerminateDelay, s.KillDelay = delay, delay
			c := connect(t, s)
			var writes <-chan error
			if mode == "ignore-term" {
				readNotification(t, c, "ready")
				if err := c.Write(t.Context(), request(t, 1, "ignore", nil)); err != nil {
					t.Fatal(err)
				}
			} else {
				writes = blockedWrites(t, c)
				time.Sleep(100 * time.Millisecond) // the pipe fills
			}
			closeWithin(t, c, 2*delay+2*time.Second)
			if writes != nil {
				select {
				case err := <-writes:
					if !errors.Is(err, transport.ErrClosed) {
						t.Errorf("the blocked Write = %v; want an error matching ErrClosed", err)
					}
				case <-time.After(testTimeout):
					t.Fatal("the blocked Write did not return after Close")
				}
			}
		})
	}
}

// TestHTTPCloseBoundedDeleteBlackHoled: a legacy session whose server
// never answers a request, holds its GET stream silent, never reads a
// large POST body, and black-holes the DELETE that ends the session:
// Close returns within DeleteTimeout (plus slack), after sending the
// DELETE, and the Writes in flight return.
func TestHTTPCloseBoundedDeleteBlackHoled(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for DeleteTimeout")
	}
	release := make(chan struct{})
	var deletes atomic.Int32
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodDelete:
			deletes.Add(1)
			<-release
			return
		case http.MethodGet:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush()
			<-release
			return
		}
		if r.ContentLength > 1<<20 {
			<-release // stops reading
			return
		}
		req := httpReadRequest(t, r)
		if req.Method == "initialize" {
			w.Header().Set("Mcp-Session-Id", "s1")
			httpWriteJSON(w, 200, httpResult(req.ID, `{"protocolVersion":"2025-11-25"}`))
			return
		}
		if req.IsNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		<-release // stops answering
	})
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for the handlers
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	if err := c.(transport.StreamReadyWaiter).WaitStreamReady(httpCtx(t)); err != nil {
		t.Fatal(err)
	}
	writes := make(chan error, 2)
	go func() {
		writes <- c.Write(context.Background(), httpRequest(t, 1, "tools/call", map[string]any{"name": "slow"}))
	}()
	go func() {
		writes <- c.Write(context.Background(), httpRequest(t, 2, "tools/call", map[string]string{"pad": strings.Repeat("x", 32<<20)}))
	}()
	time.Sleep(200 * time.Millisecond) // both POSTs are in flight
	closeWithin(t, c, transport.DeleteTimeout+2*time.Second)
	if deletes.Load() != 1 {
		t.Errorf("server saw %d DELETEs, want 1", deletes.Load())
	}
	for range 2 {
		select {
		case err := <-writes:
			if !errors.Is(err, transport.ErrClosed) {
				t.Errorf("a Write in flight = %v; want an error matching ErrClosed", err)
			}
		case <-time.After(testTimeout):
			t.Fatal("a Write in flight did not return after Close")
		}
	}
}
