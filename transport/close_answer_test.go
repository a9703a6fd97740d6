package transport_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPAnsweredDuringCloseWritten: a POST whose answer (the headers of
// an event stream) arrives once Close has begun, while Close lets another
// request's response stream end (settle), was received by the server:
// its Write fails as possibly delivered (a *transport.NetworkError that
// matches ErrClosed), not with ErrClosed alone, which says nothing of it
// was written (the engine would report it "not sent").
//
// The interleaving: request a is answered on an event stream the server
// keeps open, so that Close waits for it; request b reaches the server,
// which holds its answer; Close begins (a notification's Write fails with
// ErrClosed from then on); the server answers b.
func TestHTTPAnsweredDuringCloseWritten(t *testing.T) {
	t.Cleanup(transport.SetStreamDrainWait(httpWatchdog))
	bArrived, release, endA := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     int64  `json:"id"`
			Method string `json:"method"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		switch req.Method {
		case "a":
			httpWriteSSE(w, "data: "+httpResult(jsonrpc.Int64ID(req.ID), `{}`)+"\n\n")
			select {
			case <-endA:
			case <-r.Context().Done():
			}
		case "b":
			close(bArrived)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			httpWriteSSE(w, ": answering\n\n")
			<-r.Context().Done()
		default:
			w.WriteHeader(http.StatusAccepted)
		}
	})
	c, err := (&transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true}).Connect(httpCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Write(httpCtx(t), httpRequest(t, 1, "a", nil)); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- c.Write(httpCtx(t), httpRequest(t, 2, "b", nil)) }()
	select {
	case <-bArrived:
	case <-time.After(httpWatchdog):
		t.Fatal("request b did not reach the server")
	}
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.Close()
	}()
	began := false
	for range 2000 {
		if err := c.Write(httpCtx(t), httpNotification(t, "notifications/progress")); errors.Is(err, transport.ErrClosed) {
			began = true
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if !began {
		t.Fatal("Close did not begin")
	}
	close(release)
	err = <-wrote
	close(endA)
	// a's response is handed on once its stream ended: take it, so that
	// Close need not wait for its bound.
	_, _ = c.Read(httpCtx(t))
	<-closed
	if ne, ok := errors.AsType[*transport.NetworkError](err); !ok || ne.Unsent || !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write of a request the server answered as Close began = %v, want a *transport.NetworkError (possibly delivered) matching ErrClosed", err)
	}
}
