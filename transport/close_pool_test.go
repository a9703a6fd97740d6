package transport_test

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPCloseKeepsPooledConnections: Close right after a connect lets
// what is about to end by itself end — the legacy notifications/initialized
// still in flight, and a response stream the server ends just after its
// response — so that their TCP connections go back to the pool: five
// connects in a row, each closed at once, use one TCP connection, and
// every notifications/initialized reaches its handler's end (one of each
// may miss the 100 ms bound on a loaded machine).
func TestHTTPCloseKeepsPooledConnections(t *testing.T) {
	var conns, initsDone, initsCut atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		switch req.Method {
		case "initialize":
			httpWriteJSON(w, 200, httpResult(req.ID, `{"protocolVersion":"2025-11-25"}`))
		case "notifications/initialized":
			select {
			case <-time.After(5 * time.Millisecond): // still in flight when Close starts
				initsDone.Add(1)
				w.WriteHeader(http.StatusAccepted)
			case <-r.Context().Done():
				initsCut.Add(1)
			}
		case "server/discover":
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			w.Write([]byte("data: " + httpResult(req.ID, `{}`) + "\n\n"))
			w.(http.Flusher).Flush()
			time.Sleep(5 * time.Millisecond) // ends the stream just after its response
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	pool := &http.Transport{}
	t.Cleanup(pool.CloseIdleConnections)
	hc := &http.Client{Transport: pool}

	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			conns.Store(0)
			for i := range 5 {
				c, err := (&transport.StreamableHTTP{URL: srv.URL, HTTPClient: hc, DisableGETStream: true}).Connect(httpCtx(t))
				if err != nil {
					t.Fatal(err)
				}
				if era == "2025-11-25" {
					httpInitialize(t, c)
				} else {
					c.(transport.ProtocolVersionSetter).SetProtocolVersion(era)
					if err := c.Write(httpCtx(t), httpRequest(t, int64(i), "server/discover", nil)); err != nil {
						t.Fatal(err)
					}
					if r, ok := httpMustRead(t, c).(*jsonrpc.Response); !ok {
						t.Fatalf("Read = %v, want the discover response", r)
					}
				}
				c.Close()
			}
			// One TCP connection serves them all; a second is allowed for
			// a Close that met its 100 ms bound on a loaded machine.
			// Without the wait, each Close tore its connection down.
			if n := conns.Load(); n > 2 {
				t.Errorf("five connects, each closed at once, opened %d TCP connections; want at most 2 (the pool's)", n)
			}
		})
	}
	if initsDone.Load() < 4 {
		t.Errorf("notifications/initialized: %d answered, %d cut off by Close; want all 5 answered (4 on a loaded machine)", initsDone.Load(), initsCut.Load())
	}
}
