package transport_test

import (
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestPipeBatch: a batch line (2025-03-26) is read as its messages, in
// order; a broken answer in it is the non-terminal *jsonrpc.DecodeError of
// its id, an element that is no message is skipped, and the connection
// goes on with the next line.
func TestPipeBatch(t *testing.T) {
	p, server := transport.NewPipe()
	var wg sync.WaitGroup
	wg.Go(func() {
		defer server.Close()
		io.WriteString(server, `[{"jsonrpc":"2.0","method":"a"}, {"jsonrpc":"2.0","id":5,"result":1,"error":{"code":1,"message":"x"}}, 7, {"jsonrpc":"2.0","id":"s1","method":"ping"}]`+"\n"+
			`{"jsonrpc":"2.0","method":"b"}`+"\n")
	})
	defer wg.Wait()
	c := connect(t, p)
	defer c.Close()
	var got []string
	for {
		m, err := c.Read(t.Context())
		if de, ok := errors.AsType[*jsonrpc.DecodeError](err); ok {
			if de.ID != jsonrpc.Int64ID(5) {
				t.Errorf("broken answer names %v; want 5", de.ID)
			}
			got = append(got, "broken")
			continue
		}
		if err != nil {
			if !errors.Is(err, transport.ErrClosed) {
				t.Errorf("Read() error = %v; want ErrClosed at the end", err)
			}
			break
		}
		r := m.(*jsonrpc.Request)
		got = append(got, r.Method)
	}
	want := []string{"a", "broken", "ping", "b"}
	if len(got) != len(want) {
		t.Fatalf("read %v; want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("read %v; want %v", got, want)
		}
	}
}

// TestHTTPJSONBodyBatch: a Streamable HTTP answer whose JSON body is a
// batch (2025-03-26) is read as its messages, in order; a batch without
// the response to the request ends the request with a *StreamError.
func TestHTTPJSONBodyBatch(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		if req == nil {
			return
		}
		note := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"b"}}`
		if req.Method == "lost" {
			httpWriteJSON(w, 200, "["+note+"]")
			return
		}
		httpWriteJSON(w, 200, "["+note+","+httpResult(req.ID, `{"ok":true}`)+"]")
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, DisableGETStream: true})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2025-03-26")
	if err := c.Write(httpCtx(t), httpRequest(t, 7, "tools/list", nil)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if n, ok := httpMustRead(t, c).(*jsonrpc.Request); !ok || n.Method != "notifications/message" {
		t.Fatalf("first message = %+v; want the notification", n)
	}
	if r := httpMustResponse(t, c, 7); string(r.Result) != `{"ok":true}` {
		t.Errorf("result = %s", r.Result)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 8, "lost", nil)); err != nil {
		t.Fatalf("Write: %v", err)
	}
	httpMustRead(t, c) // the notification
	_, err := c.Read(httpCtx(t))
	if se, ok := errors.AsType[*transport.StreamError](err); !ok || se.ID != jsonrpc.Int64ID(8) {
		t.Errorf("Read = %v; want the *StreamError of request 8", err)
	}
}
