package transport_test

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPTakeResponses: with a ResponseTaker hook set, the response in a
// POST's JSON body, and the response that opens its event stream, go to
// the hook on the Write's side and not to Read; a response the hook
// refuses, and one that follows other messages on its stream, reach Read,
// in order after those messages.
func TestHTTPTakeResponses(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		switch req.Method {
		case "json", "refused":
			httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
		case "stream":
			httpWriteSSE(w, ": priming\n\ndata: "+httpResult(req.ID, `{}`)+"\n\n")
		case "stream-after-note":
			httpWriteSSE(w, `data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`+"\n\n"+
				"data: "+httpResult(req.ID, `{}`)+"\n\n")
		}
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	var (
		mu   sync.Mutex
		took []jsonrpc.ID
	)
	refuse := jsonrpc.Int64ID(2)
	c.(transport.ResponseTaker).TakeResponses(func(r *jsonrpc.Response) bool {
		if r.ID == refuse {
			return false
		}
		mu.Lock()
		took = append(took, r.ID)
		mu.Unlock()
		return true
	})
	tookNow := func() []jsonrpc.ID {
		mu.Lock()
		defer mu.Unlock()
		return append([]jsonrpc.ID(nil), took...)
	}
	write := func(id int64, method string) {
		t.Helper()
		if err := c.Write(httpCtx(t), httpRequest(t, id, method, nil)); err != nil {
			t.Fatalf("Write(%s): %v", method, err)
		}
	}

	write(1, "json")
	if got := tookNow(); len(got) != 1 || got[0] != jsonrpc.Int64ID(1) {
		t.Fatalf("after a JSON answer the hook took %v, want [1] before Write returned", got)
	}
	write(2, "refused")
	if r := httpMustResponse(t, c, 2); r.ID != refuse {
		t.Fatalf("Read = %v, want the refused response", r)
	}
	write(3, "stream")
	deadline := time.Now().Add(10 * time.Second)
	for len(tookNow()) < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := tookNow(); len(got) != 2 || got[1] != jsonrpc.Int64ID(3) {
		t.Fatalf("after an event stream that opens with the response the hook took %v, want [1 3]", got)
	}
	write(4, "stream-after-note")
	if m := httpMustRead(t, c); m.(*jsonrpc.Request).Method != "notifications/message" {
		t.Fatalf("Read = %v, want the notification first", m)
	}
	if r := httpMustResponse(t, c, 4); r.ID != jsonrpc.Int64ID(4) {
		t.Fatalf("Read = %v, want the response that followed the notification", r)
	}
	if got := tookNow(); len(got) != 2 {
		t.Errorf("the hook took %v, want only [1 3]", got)
	}
	// Nothing else is left for Read: the taken responses are not queued.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if m, err := c.Read(ctx); err == nil {
		t.Errorf("Read found %v after the taken responses, want nothing", m)
	}
}

// TestHTTPEventStreamReadBuffersReused: a request answered with an event
// stream reads it through a pooled buffer (the parser keeps what it hands
// on in buffers of its own): a round trip (client and in-process server)
// allocates about 4 KiB less than with a fresh buffer per stream.
func TestHTTPEventStreamReadBuffersReused(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		httpWriteSSE(w, "data: "+httpResult(req.ID, `{}`)+"\n\n")
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	id := int64(0)
	roundTrip := func() {
		id++
		if err := c.Write(context.Background(), httpRequest(t, id, "stream", nil)); err != nil {
			t.Fatal(err)
		}
		httpMustResponse(t, c, id)
	}
	roundTrip()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 200
	for range n {
		roundTrip()
	}
	runtime.ReadMemStats(&after)
	perTrip := (after.TotalAlloc - before.TotalAlloc) / n
	t.Logf("bytes allocated per round trip (client and server): %d", perTrip)
	if perTrip >= 12800 {
		t.Errorf("a round trip answered with an event stream allocates %d bytes; want under 12800 (about 15000 with a fresh buffer per stream)", perTrip)
	}
}
