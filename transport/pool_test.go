package transport_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPConnectionsSharePool: connections without an HTTPClient of
// their own share one pool (DefaultPool), so that a connection
// made after another one closed reuses its TCP connection, in both eras,
// on Streamable HTTP and HTTP+SSE's POSTs alike; Close leaves no goroutine
// of its own, and the pool's idle connections go when the pool is flushed.
func TestHTTPConnectionsSharePool(t *testing.T) {
	var dials atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		req := httpReadRequest(t, r)
		httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			dials.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	ignore := goleak.IgnoreCurrent()
	const conns = 4
	for i := range conns {
		version := []string{"2026-07-28", "2025-11-25"}[i%2]
		c, err := (&transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}).Connect(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		c.(transport.ProtocolVersionSetter).SetProtocolVersion(version)
		if err := c.Write(httpCtx(t), httpRequest(t, 1, "ping", nil)); err != nil {
			t.Fatal(err)
		}
		httpMustResponse(t, c, 1)
		c.Close()
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d connections dialed %d TCP connections; want 1, shared through the pool", conns, n)
	}
	// What is left is the pool's idle connection: flushing the pool, as a
	// net/http program does, ends it; no goroutine of the connections
	// remains.
	transport.CloseIdleConnections()
	if err := goleak.Find(ignore); err != nil {
		t.Error(err)
	}
}

// TestHTTPClientOwnPolicyOnSharedPool: two connections whose HTTPClients
// share one Transport keep their own redirect policies: the one with
// CrossOriginRedirects follows a redirect to another origin, the other
// refuses it, each on the same pool.
func TestHTTPClientOwnPolicyOnSharedPool(t *testing.T) {
	var reached atomic.Int32
	target := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		http.Error(w, "no body", http.StatusBadRequest)
	})
	origin := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL, http.StatusFound) // a POST becomes a GET without body
	})
	shared := &http.Client{Transport: &http.Transport{}}
	defer shared.CloseIdleConnections()
	refusing := httpDial(t, &transport.StreamableHTTP{URL: origin.URL, HTTPClient: shared})
	following := httpDial(t, &transport.StreamableHTTP{URL: origin.URL, HTTPClient: shared, CrossOriginRedirects: true})
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := refusing.Write(ctx, httpRequest(t, 1, "ping", nil)); err == nil {
		t.Error("the refusing connection followed a redirect to another origin")
	}
	if reached.Load() != 0 {
		t.Fatalf("the other origin was reached %d times by the refusing connection", reached.Load())
	}
	_ = following.Write(ctx, httpRequest(t, 1, "ping", nil)) // the GET has no body: an error is fine
	if reached.Load() != 1 {
		t.Errorf("the following connection reached the other origin %d times; want 1", reached.Load())
	}
	if shared.CheckRedirect != nil {
		t.Error("the given client was modified")
	}
}
