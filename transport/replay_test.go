package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// TestHTTPResumedStreamSkipsReplayedEvents: a server that, asked to
// resume a legacy response stream after Last-Event-ID e1, replays e1
// itself (ids are unique within a session, so it is the event already
// delivered) has that event delivered once: the server's request it
// carried is not handled twice. An event without an id of its own (it
// inherits e1 as the stream's last event id) is not a replay.
func TestHTTPResumedStreamSkipsReplayedEvents(t *testing.T) {
	const ask = `{"jsonrpc":"2.0","id":77,"method":"sampling/createMessage","params":{}}`
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	srv := resumingServer(t, "retry: 10\nid: e1\ndata: "+ask+"\n\n",
		"id: e1\ndata: "+ask+"\n\ndata: "+note+"\n\nid: e2\ndata: "+httpResult(jsonrpc.Int64ID(4), `{}`)+"\n\n")
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	if err := c.Write(httpCtx(t), httpRequest(t, 4, "tools/call", map[string]any{"name": "slow"})); err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		m := httpMustRead(t, c)
		if r, ok := m.(*jsonrpc.Response); ok && r.ID == jsonrpc.Int64ID(4) {
			break
		}
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("Read = %T %+v", m, m)
		}
		got = append(got, req.Method)
	}
	if len(got) != 2 || got[0] != "sampling/createMessage" || got[1] != "notifications/message" {
		t.Errorf("messages before the response: %v, want [sampling/createMessage notifications/message]", got)
	}
}

// TestHTTPGETStreamSkipsReplayedEvents: the legacy GET stream, reopened
// with Last-Event-ID e1 by a server that replays e1, delivers e1's
// message once; an event that reuses the id e1 with another message (a
// server numbering each connection's events afresh) is not a replay and
// is delivered.
func TestHTTPGETStreamSkipsReplayedEvents(t *testing.T) {
	var mu sync.Mutex
	n := 0
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		k := n
		mu.Unlock()
		const tools = "id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n"
		if k == 1 {
			httpWriteSSE(w, "retry: 5\n"+tools)
			return
		}
		httpWriteSSE(w, tools+"id: e1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\"}\n\n")
		<-r.Context().Done()
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	httpInitialize(t, c)
	var got []string
	for range 2 {
		m := httpMustRead(t, c)
		req, ok := m.(*jsonrpc.Request)
		if !ok {
			t.Fatalf("Read = %T", m)
		}
		got = append(got, req.Method)
	}
	if len(got) != 2 || got[0] != "notifications/tools/list_changed" || got[1] != "notifications/prompts/list_changed" {
		t.Errorf("messages: %v, want [notifications/tools/list_changed notifications/prompts/list_changed]", got)
	}
}

// TestHTTPResumedStreamOfReplaysFails: a server that answers every
// resumption of a legacy response stream with the event already
// delivered, and nothing else, makes no progress: the request fails with
// a *StreamError after the resumption's bounded failures, instead of
// being resumed for ever.
func TestHTTPResumedStreamOfReplaysFails(t *testing.T) {
	const note = `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}`
	srv := resumingServer(t, "retry: 1\nid: e1\ndata: "+note+"\n\n", "retry: 1\nid: e1\ndata: "+note+"\n\n")
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, ReconnectBackoff: time.Millisecond, MaxReconnectBackoff: time.Millisecond})
	httpInitialize(t, c)
	if err := c.Write(httpCtx(t), httpRequest(t, 4, "tools/call", map[string]any{"name": "slow"})); err != nil {
		t.Fatal(err)
	}
	if m := httpMustRead(t, c); m.(*jsonrpc.Request).Method != "notifications/message" {
		t.Fatalf("first message %+v, want the notification", m)
	}
	_, err := c.Read(httpCtx(t))
	var se *transport.StreamError
	if !errors.As(err, &se) || se.ID != jsonrpc.Int64ID(4) {
		t.Errorf("Read after the replays = %v, want a *StreamError for request 4", err)
	}
}

// TestHTTPGETStreamLongIDsNotKept: what a stream remembers of the events
// it delivered, to skip their replays, does not grow with their ids: a
// server that gives a thousand events ids of 60 KB each does not make
// the connection hold 60 MB of them.
func TestHTTPGETStreamLongIDsNotKept(t *testing.T) {
	const events = 1000
	id := strings.Repeat("i", 60<<10)
	ls := &httpLegacyServer{t: t, session: "s", deletes: make(chan http.Header, 1)}
	ls.get = func(w http.ResponseWriter, r *http.Request) {
		for k := range events {
			httpWriteSSE(w, fmt.Sprintf("id: %s%d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"n\":%d}}\n\n", id, k, k))
		}
		<-r.Context().Done()
	}
	srv := newHTTPServer(t, ls.ServeHTTP)
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL, MaxMessageSize: 64 << 10})
	httpInitialize(t, c)
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range events {
		httpMustRead(t, c)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapAlloc) - int64(before.HeapAlloc); grown > 20<<20 {
		t.Errorf("the heap grew by %d MB over %d events with 60 KB ids, want the ids not kept", grown>>20, events)
	}
}

// resumingServer is a legacy Streamable HTTP server that answers
// initialize, accepts notifications, answers every other POST with the
// event stream post, and every GET that resumes a stream (Last-Event-ID)
// with the event stream get; a GET without one is refused (405).
func resumingServer(t *testing.T, post, get string) *httptest.Server {
	return newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodPost:
			req := httpReadRequest(t, r)
			if req.Method == "initialize" {
				httpWriteJSON(w, 200, httpResult(req.ID, `{}`))
				return
			}
			if req.IsNotification() {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			httpWriteSSE(w, post)
		case http.MethodGet:
			if r.Header.Get("Last-Event-ID") == "" {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			httpWriteSSE(w, get)
		}
	})
}
