package transport_test

import (
	"net/http"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPReadOrigin: ReadOrigin names the request whose POST response
// stream carried a message (a server request sent while that request is
// pending, and its response), a request answered with a JSON body, and
// the zero ID for what came on the standalone GET stream.
func TestHTTPReadOrigin(t *testing.T) {
	getServed := make(chan struct{})
	ls := &httpLegacyServer{t: t, session: "sess-o", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		httpWriteSSE(w, "id: g1\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-get\",\"method\":\"ping\"}\n\n")
		close(getServed)
		<-r.Context().Done()
	}
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "sess-o" {
			req := httpReadRequest(t, r)
			if req != nil && req.Method == "tools/call" {
				httpWriteSSE(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"srv-post\",\"method\":\"roots/list\"}\n\n"+
					"data: "+httpResult(req.ID, `{"done":true}`)+"\n\n")
				return
			}
			if req != nil && req.Method == "tools/list" {
				httpWriteJSON(w, 200, httpResult(req.ID, `{"tools":[]}`))
				return
			}
			w.WriteHeader(http.StatusAccepted)
			return
		}
		ls.ServeHTTP(w, r)
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	or, ok := c.(transport.OriginReader)
	if !ok {
		t.Fatalf("%T does not implement transport.OriginReader", c)
	}
	read := func() (jsonrpc.Message, jsonrpc.ID) {
		t.Helper()
		m, on, err := or.ReadOrigin(httpCtx(t))
		if err != nil {
			t.Fatalf("ReadOrigin: %v", err)
		}
		return m, on
	}
	<-getServed
	if m, on := read(); on.IsValid() {
		t.Errorf("the GET stream's %+v came with origin %v, want none", m, on)
	} else if r, ok := m.(*jsonrpc.Request); !ok || r.ID != jsonrpc.StringID("srv-get") {
		t.Errorf("first message = %+v, want the GET stream's ping", m)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 7, "tools/call", map[string]any{"name": "x"})); err != nil {
		t.Fatal(err)
	}
	m, on := read()
	if r, ok := m.(*jsonrpc.Request); !ok || r.ID != jsonrpc.StringID("srv-post") || on != jsonrpc.Int64ID(7) {
		t.Errorf("ReadOrigin = %+v from %v, want the server's roots/list from request 7", m, on)
	}
	m, on = read()
	if r, ok := m.(*jsonrpc.Response); !ok || r.ID != jsonrpc.Int64ID(7) || on != jsonrpc.Int64ID(7) {
		t.Errorf("ReadOrigin = %+v from %v, want the response to 7 from 7", m, on)
	}
	if err := c.Write(httpCtx(t), httpRequest(t, 8, "tools/list", nil)); err != nil {
		t.Fatal(err)
	}
	if m, on = read(); on != jsonrpc.Int64ID(8) {
		t.Errorf("the JSON body %+v came with origin %v, want 8", m, on)
	}
}
