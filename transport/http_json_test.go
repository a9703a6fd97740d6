package transport_test

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPJSONBodyBoundedByWriteContext checks that Write, which reads a
// JSON response body itself, gives up when its ctx ends mid-body.
func TestHTTPJSONBodyBoundedByWriteContext(t *testing.T) {
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0",`))
		w.(http.Flusher).Flush()
		close(started)
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second): // a safety net should Write not give up
		}
	}))
	defer srv.Close()
	c, err := (&transport.StreamableHTTP{URL: srv.URL}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	err = c.Write(ctx, httpRequest(t, 1, "tools/call", map[string]any{"name": "slow"}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Write = %v; want context.Canceled", err)
	}
}

// TestHTTPJSONQueuedForRead checks that JSON responses Write read are
// returned by Read in order, also when several wait and Read runs later.
func TestHTTPJSONQueuedForRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		req := m.(*jsonrpc.Request)
		if req.Method == "bad" {
			httpWriteJSON(w, http.StatusOK, `not json`)
			return
		}
		httpWriteJSON(w, http.StatusOK, httpResult(req.ID, `{"resultType":"complete"}`))
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := (&transport.StreamableHTTP{URL: srv.URL}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	for i, m := range []string{"tools/list", "bad", "prompts/list"} {
		if err := c.Write(ctx, httpRequest(t, int64(i+1), m, nil)); err != nil {
			t.Fatalf("Write %s = %v", m, err)
		}
	}
	for i := range 3 {
		msg, err := c.Read(ctx)
		want := jsonrpc.Int64ID(int64(i + 1))
		if i == 1 {
			var se *transport.StreamError
			if !errors.As(err, &se) || se.ID != want {
				t.Fatalf("Read %d = %v, %v; want a *StreamError for id 2", i, msg, err)
			}
			continue
		}
		if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || r.ID != want {
			t.Fatalf("Read %d = %v, %v; want the response to %v", i, msg, err, want)
		}
	}
}

// TestHTTPJSONMaxMessageSizeHuge: with a MaxMessageSize as large as an
// int holds, a JSON body of unknown length (chunked) is read as any
// other. The bound of its read used to wrap around and read nothing, so
// every such answer was lost as an empty body.
func TestHTTPJSONMaxMessageSizeHuge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush() // no Content-Length: the body is chunked
		io.WriteString(w, httpResult(jsonrpc.Int64ID(1), `{"resultType":"complete"}`))
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := (&transport.StreamableHTTP{URL: srv.URL, MaxMessageSize: math.MaxInt}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	if err := c.Write(ctx, httpRequest(t, 1, "tools/list", nil)); err != nil {
		t.Fatalf("Write = %v", err)
	}
	msg, err := c.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); err != nil || !ok || r.ID != jsonrpc.Int64ID(1) {
		t.Fatalf("Read = %v, %v; want the response to 1", msg, err)
	}
}

// TestHTTPJSONContentLengthNotTrusted: a server that announces a body as
// large as the message size limit and sends a few bytes of it costs the
// client what it sent, not the announced length, while it waits for the
// rest (a server could otherwise make every request in flight hold the
// limit, 16 MiB by default).
func TestHTTPJSONContentLengthNotTrusted(t *testing.T) {
	sent := make(chan struct{})
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(transport.DefaultMaxMessageSize))
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"jsonrpc":"2.0",`)
		w.(http.Flusher).Flush()
		close(sent)
		<-release
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := (&transport.StreamableHTTP{URL: srv.URL}).Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	wrote := make(chan error, 1)
	go func() { wrote <- c.Write(ctx, httpRequest(t, 1, "tools/list", nil)) }()
	<-sent
	// Give the client time to read what came; it allocates at once when
	// it trusts the length.
	var grew uint64
	for range 50 {
		time.Sleep(10 * time.Millisecond)
		var now runtime.MemStats
		runtime.ReadMemStats(&now)
		if grew = now.TotalAlloc - before.TotalAlloc; grew >= transport.DefaultMaxMessageSize/2 {
			break
		}
	}
	if grew >= transport.DefaultMaxMessageSize/2 {
		t.Errorf("waiting for a body announced as %d bytes of which 17 came allocated %d bytes", transport.DefaultMaxMessageSize, grew)
	}
	cancel()
	<-wrote
}

// TestHTTPJSONLongBodyAnnounced: a body longer than what the client
// allocates at once from its Content-Length is read whole, and one that
// ends before its announced length fails the request.
func TestHTTPJSONLongBodyAnnounced(t *testing.T) {
	result := `{"text":"` + strings.Repeat("x", 6<<20) + `"}`
	for _, short := range []bool{false, true} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			body := httpResult(jsonrpc.Int64ID(1), result)
			w.Header().Set("Content-Type", "application/json")
			n := len(body)
			if short {
				n += 1000
			}
			w.Header().Set("Content-Length", strconv.Itoa(n))
			io.WriteString(w, body)
		}))
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		c, err := (&transport.StreamableHTTP{URL: srv.URL}).Connect(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
		err = c.Write(ctx, httpRequest(t, 1, "tools/list", nil))
		if short {
			if err == nil {
				msg, rerr := c.Read(ctx)
				if _, ok := msg.(*jsonrpc.Response); ok && rerr == nil {
					t.Error("a body shorter than announced gave a response")
				}
			}
		} else {
			if err != nil {
				t.Fatalf("Write = %v", err)
			}
			msg, err := c.Read(ctx)
			r, ok := msg.(*jsonrpc.Response)
			if err != nil || !ok || string(r.Result) != result {
				t.Fatalf("Read = %T, %v; want the %d-byte result", msg, err, len(result))
			}
		}
		c.Close()
		cancel()
		srv.Close()
	}
}
