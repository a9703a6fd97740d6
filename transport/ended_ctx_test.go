package transport_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// TestWriteWithEndedContextSendsNothing: a Write whose context has already
// ended fails with the context's error and sends nothing, on every
// transport that POSTs, in both eras, and on a stream (the pipe, which
// frames like stdio; WebSocket's check is the same). The engine relies on it: a step whose context ended
// (a heal raced by Close) must not reach the server.
func TestWriteWithEndedContextSendsNothing(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	const tries = 200
	write := func(t *testing.T, c transport.Conn, posts *atomic.Int64) {
		t.Helper()
		before := posts.Load()
		for i := range tries {
			err := c.Write(ended, httpRequest(t, int64(i+100), "tools/call", nil))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Write %d with an ended context = %v, want context.Canceled", i, err)
			}
		}
		if n := posts.Load() - before; n != 0 {
			t.Errorf("%d of %d Writes with an ended context reached the server; want none", n, tries)
		}
	}
	for _, era := range []string{"2026-07-28", "2025-11-25"} {
		t.Run("streamable-http/"+era, func(t *testing.T) {
			var posts atomic.Int64
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				if r.Method != http.MethodPost {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				posts.Add(1)
				req := httpReadRequest(t, r)
				httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(era)
			write(t, c, &posts)
		})
	}
	t.Run("pipe", func(t *testing.T) {
		p, server := transport.NewPipe()
		var got atomic.Int64 // bytes the server side read
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 512)
			for {
				n, err := server.Read(buf)
				got.Add(int64(n))
				if err != nil {
					return
				}
			}
		}()
		c := httpDial(t, p)
		write(t, c, &got)
		c.Close()
		server.Close()
		<-done
		if n := got.Load(); n != 0 {
			t.Errorf("the server side read %d bytes; want none", n)
		}
	})
	t.Run("sse", func(t *testing.T) {
		var posts atomic.Int64
		srv := sseServerFunc(t, "/messages", func(r *http.Request) (int, []string) {
			posts.Add(1)
			return http.StatusAccepted, nil
		})
		c := httpDial(t, &transport.SSE{URL: srv.URL + "/sse"})
		write(t, c, &posts)
	})
}
