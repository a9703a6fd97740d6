package engine

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPResumeRefusedDialMayHaveRun: a legacy response stream that the
// server accepted (200, a primed event stream: the server may have run
// the tool), then broke with the server gone, so that every resumption
// GET finds its dial refused, lost a request that may have run: the call
// fails with ErrOutcomeUnknown (ReplayNone), never "not sent" as a POST
// whose own dial was refused would.
func TestHTTPResumeRefusedDialMayHaveRun(t *testing.T) {
	var runs atomic.Int32
	var srv *httptest.Server
	h := toolCallScript(serveLegacyHTTP, func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		runs.Add(1)
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, "id: e1\ndata: \n\n") // a priming event: resumable
		w.(http.Flusher).Flush()
		// The server goes away: no new connection is accepted, and the
		// stream ends without the response.
		srv.Listener.Close()
		srv.CloseClientConnections()
	})
	srv = httptest.NewServer(h)
	t.Cleanup(srv.Close)
	tr := &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true, ReconnectBackoff: time.Millisecond, MaxReconnectBackoff: 5 * time.Millisecond}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s, err := Connect(ctx, tr, Config{Mode: ModeLegacy, Replay: ReplayNone,
		Retry: RetryPolicy{InitialInterval: time.Millisecond, MaxInterval: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	_, err = s.Call(ctx, protocol.MethodToolsCall, map[string]any{"name": "charge"}, nil)
	if ctx.Err() != nil {
		t.Fatalf("the call did not return within its context: %v", err)
	}
	if !errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrNotSent) {
		t.Errorf("Call = %v; want ErrOutcomeUnknown, not ErrNotSent", err)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
}
