package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPWaitStreamReady: WaitStreamReady returns at once when no GET
// stream is wanted, blocks until the legacy GET stream's headers arrive,
// and returns once the server refused the stream (405).
func TestHTTPWaitStreamReady(t *testing.T) {
	t.Run("disabled", func(t *testing.T) {
		ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
		srv := newHTTPServer(t, ls.ServeHTTP)
		c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
		httpInitialize(t, c)
		if err := c.(transport.StreamReadyWaiter).WaitStreamReady(httpCtx(t)); err != nil {
			t.Fatalf("WaitStreamReady = %v, want nil", err)
		}
	})
	t.Run("not-initialized", func(t *testing.T) {
		srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) })
		c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
		if err := c.(transport.StreamReadyWaiter).WaitStreamReady(httpCtx(t)); err != nil {
			t.Fatalf("WaitStreamReady = %v, want nil", err)
		}
	})
	t.Run("405", func(t *testing.T) {
		ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
		ls.get = func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusMethodNotAllowed) }
		srv := newHTTPServer(t, ls.ServeHTTP)
		c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
		httpInitialize(t, c)
		if err := c.(transport.StreamReadyWaiter).WaitStreamReady(httpCtx(t)); err != nil {
			t.Fatalf("WaitStreamReady = %v, want nil", err)
		}
	})
	t.Run("waits-for-headers", func(t *testing.T) {
		release := make(chan struct{})
		arrived := make(chan struct{}, 1)
		ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
		ls.get = func(w http.ResponseWriter, r *http.Request) {
			select {
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			httpWriteSSE(w, ": open\n\n")
			<-r.Context().Done()
		}
		srv := newHTTPServer(t, ls.ServeHTTP)
		c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
		httpInitialize(t, c)
		w := c.(transport.StreamReadyWaiter)
		<-arrived
		// The GET is held: a cancelled wait reports the context.
		ctx, cancel := context.WithCancel(httpCtx(t))
		cancel()
		if err := w.WaitStreamReady(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("WaitStreamReady with the GET held = %v, want context.Canceled", err)
		}
		close(release)
		if err := w.WaitStreamReady(httpCtx(t)); err != nil {
			t.Fatalf("WaitStreamReady after the headers = %v, want nil", err)
		}
	})
}

// TestHTTPWriteDoesNotRetainMessage: Write keeps no reference to the
// message or its params after it returns, even while the request body is
// still being sent (the server answers before reading the body).
func TestHTTPWriteDoesNotRetainMessage(t *testing.T) {
	const size = 4 << 20
	got := make(chan []byte, 1)
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("EnableFullDuplex: %v", err)
		}
		// Answer first: the client's Write returns while its body is
		// still in flight.
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		b, _ := io.ReadAll(r.Body)
		got <- b
		io.WriteString(w, "data: "+httpResult(jsonrpc.Int64ID(1), "{}")+"\n\n")
		w.(http.Flusher).Flush()
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	params := json.RawMessage(`{"data":"` + strings.Repeat("a", size) + `"}`)
	req := &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "tools/call", Params: params}
	want, err := jsonrpc.EncodeMessage(req)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Write(httpCtx(t), req); err != nil {
		t.Fatal(err)
	}
	// The caller reuses its buffers at once.
	for i := range params {
		params[i] = 'x'
	}
	req.Method = "reused"
	body := <-got
	if !bytes.Equal(body, want) {
		t.Errorf("the server received a body changed after Write returned (%d bytes, want %d)", len(body), len(want))
	}
	httpMustResponse(t, c, 1)
}
