package transport_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// brokenShapes are the ways an answer can carry its call's id and still
// not be a JSON-RPC message (issue 15, item 1).
var brokenShapes = []string{"both", "neither", "code-float", "code-string", "error-string", "version-1.0", "too-deep"}

// brokenAnswer returns the line a hostile server sends for shape, as the
// answer to id (raw JSON).
func brokenAnswer(shape, id string) string {
	switch shape {
	case "both":
		return `{"jsonrpc":"2.0","id":` + id + `,"result":{},"error":{"code":-32000,"message":"x"}}`
	case "neither":
		return `{"jsonrpc":"2.0","id":` + id + `}`
	case "code-float":
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":1.5,"message":"x"}}`
	case "code-string":
		return `{"jsonrpc":"2.0","id":` + id + `,"error":{"code":"-32000","message":"x"}}`
	case "error-string":
		return `{"jsonrpc":"2.0","id":` + id + `,"error":"boom"}`
	case "version-1.0":
		return `{"jsonrpc":"1.0","id":` + id + `,"result":{}}`
	case "too-deep":
		const depth = 10001 // one more than the decoder allows
		return `{"jsonrpc":"2.0","id":` + id + `,"result":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`
	}
	panic("unknown shape " + shape)
}

// checkBrokenAnswers asks c for every broken shape and checks that Read
// fails promptly with a non-terminal *jsonrpc.DecodeError naming the
// request's id, and that the connection then still answers.
func checkBrokenAnswers(t *testing.T, c transport.Conn) {
	t.Helper()
	for i, shape := range brokenShapes {
		id := int64(100 + i)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := c.Write(ctx, request(t, id, "broken", map[string]string{"name": shape})); err != nil {
			cancel()
			t.Fatalf("%s: Write() error = %v", shape, err)
		}
		m, err := c.Read(ctx)
		cancel()
		de, ok := errors.AsType[*jsonrpc.DecodeError](err)
		if !ok {
			t.Fatalf("%s: Read() = %v, %v; want a *jsonrpc.DecodeError", shape, m, err)
		}
		if got, _ := de.ID.Int64(); got != id {
			t.Errorf("%s: DecodeError.ID = %v, want %d", shape, de.ID, id)
		}
		if errors.Is(err, transport.ErrClosed) {
			t.Errorf("%s: Read() error %v matches ErrClosed; it must not be terminal", shape, err)
		}
		if r := call(t, c, id+1000, "echo", map[string]int{"n": i}); r.Error != nil {
			t.Fatalf("%s: echo after the broken answer = %v", shape, r.Error)
		}
	}
}

func TestStdioBrokenAnswerFailsItsCall(t *testing.T) {
	checkBrokenAnswers(t, connect(t, testServer(t, "echo")))
}

// hostileAnswers returns what the hostile in-process servers send for req:
// for method broken, a noise line and the broken answer of the shape
// named by params.name; for anything else, the echo answer.
func hostileAnswers(req *jsonrpc.Request) []string {
	if req.Method != "broken" {
		resp, _ := jsonrpc.NewResponse(req.ID, req.Params)
		b, _ := jsonrpc.EncodeMessage(resp)
		return []string{string(b)}
	}
	var p struct{ Name string }
	json.Unmarshal(req.Params, &p)
	id, _ := req.ID.Int64()
	return []string{"not JSON at all", brokenAnswer(p.Name, strconv.FormatInt(id, 10))}
}

func TestPipeBrokenAnswerFailsItsCall(t *testing.T) {
	p, server := transport.NewPipe()
	wait := serveLines(server, hostileAnswers)
	defer wait()
	c := connect(t, p)
	defer c.Close()
	checkBrokenAnswers(t, c)
}

func TestWebSocketBrokenAnswerFailsItsCall(t *testing.T) {
	srv := wsServer(t, func(ctx context.Context, ws *websocket.Conn, r *http.Request) {
		for {
			_, data, err := ws.Read(ctx)
			if err != nil {
				return
			}
			m, err := jsonrpc.DecodeMessage(data)
			req, ok := m.(*jsonrpc.Request)
			if err != nil || !ok {
				return
			}
			for _, s := range hostileAnswers(req) {
				if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
					return
				}
			}
		}
	})
	checkBrokenAnswers(t, connect(t, &transport.WebSocket{URL: srv.URL, MaxMessageSize: 1 << 20}))
}

// TestStreamableHTTPBrokenAnswerInStream: a broken answer in a POST's
// event stream fails its call at once, although the server keeps the
// stream open.
func TestStreamableHTTPBrokenAnswerInStream(t *testing.T) {
	srv := newHTTPServer(t, func(w http.ResponseWriter, r *http.Request) {
		req := httpReadRequest(t, r)
		if req.IsNotification() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, s := range hostileAnswers(req) {
			httpWriteSSE(w, "data: "+s+"\n\n")
		}
		if req.Method == "broken" {
			<-r.Context().Done() // the stream stays open
		}
	})
	c := httpDial(t, &transport.StreamableHTTP{URL: srv.URL})
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	checkBrokenAnswers(t, c)
}

// TestSSEBrokenAnswerFailsItsCall: the same over the 2024-11-05 HTTP+SSE
// transport, whose answers all come on the GET stream.
func TestSSEBrokenAnswerFailsItsCall(t *testing.T) {
	srv := sseServerFunc(t, "/messages", func(r *http.Request) (int, []string) {
		return http.StatusAccepted, hostileAnswers(httpReadRequest(t, r))
	})
	checkBrokenAnswers(t, httpDial(t, &transport.SSE{URL: srv.URL + "/sse"}))
}
