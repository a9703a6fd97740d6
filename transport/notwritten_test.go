package transport_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// gatedDialer is the dialer of an HTTP client whose dials, once mode is
// set, wait for their context or the test's end ("hold": a connection
// still being made; net/http lets a dial go on after its request was
// cancelled) or fail with an error of the dialer's own ("fail").
type gatedDialer struct {
	mode    chan string   // buffered, 1: the mode for the next dials
	dialing chan struct{} // a held dial started
	release chan struct{} // closed at the test's end
}

func newGatedDialer(t *testing.T) *gatedDialer {
	g := &gatedDialer{mode: make(chan string, 1), dialing: make(chan struct{}, 8), release: make(chan struct{})}
	t.Cleanup(func() { close(g.release) })
	return g
}

func (g *gatedDialer) set(mode string) { g.mode <- mode }

func (g *gatedDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var mode string
	select {
	case mode = <-g.mode:
		g.mode <- mode
	default:
	}
	switch mode {
	case "hold":
		g.dialing <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-g.release:
			return nil, errors.New("test: ended")
		}
	case "fail":
		return nil, errors.New("test: the proxy refused the connection")
	}
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// notWrittenConns connects, through hc, a Streamable HTTP and an HTTP+SSE
// connection to a server whose POST handler is post (the SSE server
// streams the endpoint event and holds its stream).
var notWrittenConns = []struct {
	name    string
	connect func(t *testing.T, hc *http.Client, post http.HandlerFunc) transport.Conn
}{
	{"streamable", func(t *testing.T, hc *http.Client, post http.HandlerFunc) transport.Conn {
		srv := newHTTPServer(t, post)
		return httpDial(t, &transport.StreamableHTTP{URL: srv.URL, HTTPClient: hc})
	}},
	{"sse", func(t *testing.T, hc *http.Client, post http.HandlerFunc) transport.Conn {
		srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				post(w, r)
				return
			}
			httpWriteSSE(w, "event: endpoint\ndata: /m\n\n")
			<-r.Context().Done()
		})
		return httpDial(t, &transport.SSE{URL: srv.URL, HTTPClient: hc})
	}},
}

// TestPOSTNotWritten: a POST whose connection was still being made when
// the connection closed or the caller's context ended, or could not be
// made, was not written, and its Write says so: ErrClosed without a
// [*transport.NetworkError] (the error of a request that may have been
// delivered), or a NetworkError with Unsent set (wrapping the context's
// error when that ended it); a POST whose body reached the server before its
// connection broke is a NetworkError without Unsent. Nothing is told
// "in flight" that never left the client.
func TestPOSTNotWritten(t *testing.T) {
	written := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		conn.Close() // the request arrived whole; no answer
	}
	for _, tc := range notWrittenConns {
		// gated connects through a gatedDialer set to mode once connected,
		// to a server no POST may reach.
		gated := func(t *testing.T, mode string) (transport.Conn, *gatedDialer) {
			g := newGatedDialer(t)
			hc := &http.Client{Transport: &http.Transport{DialContext: g.dial}}
			c := tc.connect(t, hc, func(w http.ResponseWriter, r *http.Request) {
				t.Error("a POST reached the server")
			})
			g.set(mode)
			return c, g
		}
		t.Run(tc.name+"/closed-while-dialing", func(t *testing.T) {
			c, g := gated(t, "hold")
			done := make(chan error, 1)
			go func() { done <- c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", nil)) }()
			<-g.dialing
			c.Close()
			err := <-done
			if _, ok := errors.AsType[*transport.NetworkError](err); ok || !errors.Is(err, transport.ErrClosed) {
				t.Fatalf("Write = %v, want ErrClosed and no *NetworkError (the POST was never written)", err)
			}
		})
		t.Run(tc.name+"/context-ended-while-dialing", func(t *testing.T) {
			c, g := gated(t, "hold")
			ctx, cancel := context.WithCancel(httpCtx(t))
			go func() {
				<-g.dialing
				cancel()
			}()
			err := c.Write(ctx, httpRequest(t, 1, "tools/call", nil))
			if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || !ne.Unsent || !errors.Is(err, context.Canceled) {
				t.Fatalf("Write = %v, want context.Canceled in a *NetworkError with Unsent", err)
			}
		})
		t.Run(tc.name+"/dial-failed", func(t *testing.T) {
			c, _ := gated(t, "fail")
			err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", nil))
			if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || !ne.Unsent {
				t.Fatalf("Write = %v, want a *NetworkError with Unsent", err)
			}
		})
		t.Run(tc.name+"/written-then-lost", func(t *testing.T) {
			hc := &http.Client{Transport: &http.Transport{}}
			c := tc.connect(t, hc, written)
			err := c.Write(httpCtx(t), httpRequest(t, 1, "tools/call", nil))
			if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || ne.Unsent {
				t.Fatalf("Write = %v, want a *NetworkError without Unsent (the server had the request)", err)
			}
		})
	}
}

// TestHTTPInitializedFailedTwice: a legacy notifications/initialized that
// the server fails (HTTP 500), and fails again when the next Write sends
// it anew first: that Write sends nothing of its own message and fails
// with an error matching ErrClosed that wraps no *NetworkError or
// *HTTPError (those say a message may have been delivered, or answered).
func TestHTTPInitializedFailedTwice(t *testing.T) {
	var requests atomic.Int32
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		switch {
		case req.Method == "initialize":
			httpWriteJSON(w, 200, httpResult(req.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`))
		case req.IsNotification():
			http.Error(w, "no", http.StatusInternalServerError)
		default:
			requests.Add(1)
			httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
		}
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
	httpInitialize(t, c)
	err := c.Write(httpCtx(t), httpRequest(t, 2, "tools/call", nil))
	_, isNet := errors.AsType[*transport.NetworkError](err)
	_, isHTTP := errors.AsType[*transport.HTTPError](err)
	if !errors.Is(err, transport.ErrClosed) || isNet || isHTTP {
		t.Fatalf("Write = %v, want ErrClosed and neither a *NetworkError nor an *HTTPError", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests, want 0", n)
	}
}

// TestHTTPInitializedWrite: the Write of a legacy notifications/initialized
// returns once the server answered it; a refusal returns nil (the next
// Write sends it again first: TestHTTPInitializedFailedTwice); a
// connection closed while it waits for the answer fails it with an error
// matching ErrClosed, as a context that ended fails it with the context's
// error.
func TestHTTPInitializedWrite(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(c transport.Conn, cancel context.CancelFunc) // ends the wait; nil: the server answers
		want func(error) bool
	}{
		{"answered", nil, func(err error) bool { return err == nil }},
		{"refused", nil, func(err error) bool { return err == nil }},
		{"closed", func(c transport.Conn, _ context.CancelFunc) { c.Close() }, func(err error) bool { return errors.Is(err, transport.ErrClosed) }},
		{"context", func(_ transport.Conn, cancel context.CancelFunc) { cancel() }, func(err error) bool { return errors.Is(err, context.Canceled) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			arrived := make(chan struct{})
			srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
				req := httpReadRequest(t, r)
				switch {
				case req.Method == "initialize":
					httpWriteJSON(w, 200, httpResult(req.ID, `{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"s","version":"1"}}`))
				case tc.name == "answered":
					w.WriteHeader(http.StatusAccepted)
				case tc.name == "refused":
					http.Error(w, "no", http.StatusInternalServerError)
				default:
					close(arrived)
					<-r.Context().Done() // never answered
				}
			})
			c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
			if err := c.Write(httpCtx(t), httpRequest(t, 0, "initialize", map[string]any{"protocolVersion": "2025-11-25"})); err != nil {
				t.Fatalf("initialize: %v", err)
			}
			httpMustResponse(t, c, 0)
			c.(transport.ProtocolVersionSetter).SetProtocolVersion("2025-11-25")
			ctx, cancel := context.WithCancel(httpCtx(t))
			defer cancel()
			if tc.end != nil {
				go func() {
					<-arrived
					tc.end(c, cancel)
				}()
			}
			if err := c.Write(ctx, httpNotification(t, "notifications/initialized")); !tc.want(err) {
				t.Errorf("Write(notifications/initialized) = %v", err)
			}
		})
	}
}
