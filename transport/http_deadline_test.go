package transport_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPWriteHonoursDeadline: a request's Write ends at its context's
// deadline while the server holds the response headers, and while it
// trickles a JSON body (slowloris), in both eras. (The session's timeouts
// must reach Write as such a deadline; see issue 15, item 4.)
func TestHTTPWriteHonoursDeadline(t *testing.T) {
	release := make(chan struct{})
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed) // no GET stream
			return
		}
		httpReadRequest(t, r)
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK)
			for {
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
				select {
				case <-release:
					return
				case <-r.Context().Done():
					return
				case <-time.After(50 * time.Millisecond):
				}
			}
		}
		select { // slow headers
		case <-release:
		case <-r.Context().Done():
		}
	})
	t.Cleanup(func() { close(release) })
	for _, path := range []string{"/headers", "/body"} {
		for _, version := range []string{"2026-07-28", "2025-11-25"} {
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL + path})
			c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
			const deadline = 300 * time.Millisecond
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			start := time.Now()
			err := c.Write(ctx, httpRequest(t, 1, "tools/call", map[string]any{"name": "slow"}))
			took := time.Since(start)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s %s: Write = %v; want context.DeadlineExceeded", path, version, err)
			}
			if took > deadline+2*time.Second {
				t.Errorf("%s %s: Write took %v past a %v deadline", path, version, took, deadline)
			}
			c.Close()
		}
	}
}
