package transport_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPWriteContextThatCannotEnd: a Write whose context cannot end
// (context.Background) gets its answer, as JSON and as an event stream,
// and costs fewer allocations than one with a context that can: no watch
// of the context is set up for it.
func TestHTTPWriteContextThatCannotEnd(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		if req.Method == "stream" {
			httpWriteSSE(w, "data: "+httpResult(req.ID, `{}`)+"\n\n")
			return
		}
		httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	id := int64(0)
	roundTrip := func(ctx context.Context, method string) {
		id++
		if err := c.Write(ctx, httpRequest(t, id, method, nil)); err != nil {
			t.Fatalf("Write(%s): %v", method, err)
		}
		if m, err := c.Read(httpCtx(t)); err != nil {
			t.Fatalf("Read after %s: %v", method, err)
		} else if r, ok := m.(*jsonrpc.Response); !ok || r.ID != jsonrpc.Int64ID(id) {
			t.Fatalf("Read after %s = %v; want the response to %d", method, m, id)
		}
	}
	for _, method := range []string{"json", "stream"} {
		roundTrip(context.Background(), method)
	}
	if raceEnabled {
		return // the race detector allocates
	}
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	never := testing.AllocsPerRun(200, func() { roundTrip(context.Background(), "json") })
	can := testing.AllocsPerRun(200, func() { roundTrip(cancellable, "json") })
	t.Logf("allocations per Write+Read: %v (context that cannot end), %v (one that can)", never, can)
	if never >= can {
		t.Errorf("a Write with a context that cannot end: %v allocations; with one that can: %v; want fewer", never, can)
	}
}

// TestHTTPJSONBodyReadToItsLength: a JSON answer with a Content-Length is
// read into one buffer of that length, which the decoded message keeps
// (its result is not copied out of it): a 1 MiB result costs the client
// (and the in-process server) about 1 MiB of allocation, where a copy of
// the result cost 1 MiB more and io.ReadAll's growing buffer 1.2 MiB
// more again; one declared longer than MaxMessageSize fails with a
// MessageTooLargeError.
func TestHTTPJSONBodyReadToItsLength(t *testing.T) {
	const size = 1 << 20
	body := []byte(httpResult(jsonrpc.Int64ID(7), `{"text":"`+strings.Repeat("x", size)+`"}`))
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	roundTrip := func() {
		if err := c.Write(context.Background(), httpRequest(t, 7, "big", nil)); err != nil {
			t.Fatalf("Write: %v", err)
		}
		httpMustResponse(t, c, 7)
	}
	roundTrip()
	if !raceEnabled {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		roundTrip()
		runtime.ReadMemStats(&after)
		t.Logf("one 1 MiB JSON answer: %d bytes allocated", after.TotalAlloc-before.TotalAlloc)
		if got := after.TotalAlloc - before.TotalAlloc; got > 3*size/2 {
			t.Errorf("a 1 MiB JSON answer allocated %d bytes; want under %d", got, 3*size/2)
		}
	}
	small := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, MaxMessageSize: size / 2})
	small.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	if err := small.Write(httpCtx(t), httpRequest(t, 7, "big", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := small.Read(httpCtx(t))
	if _, ok := errors.AsType[*transport.MessageTooLargeError](err); !ok {
		t.Errorf("Read after an answer above MaxMessageSize = %v; want a MessageTooLargeError", err)
	}
}
