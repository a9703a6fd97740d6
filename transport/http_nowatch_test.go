package transport_test

import (
	"context"
	"net/http"
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
