package conduittest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// Handler returns the replay's Streamable HTTP handler (both eras, any
// path): a POSTed request is answered with application/json, or with an
// event stream when the recorded answer came with other messages; POSTed
// notifications and responses get 202. A GET opens the standalone event
// stream, which carries what the recorded server sent after answering (a
// legacy session's notifications); DELETE gets 405.
func (r *Replay) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.Method == http.MethodGet && strings.Contains(req.Header.Get("Accept"), "text/event-stream") {
			r.serveGet(w, req)
			return
		}
		if req.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, req.Body, maxTranscriptLine))
		if err != nil {
			http.Error(w, "request too large", http.StatusRequestEntityTooLarge)
			return
		}
		msg, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			r.mismatch(fmt.Sprintf("conduittest: replay: undecodable message from the client: %v", err))
			http.Error(w, "not a JSON-RPC message", http.StatusBadRequest)
			return
		}
		r.serveHTTPMessage(w, req, msg)
	})
}

// serveHTTPMessage answers one POSTed message.
func (r *Replay) serveHTTPMessage(w http.ResponseWriter, req *http.Request, msg jsonrpc.Message) {
	m, ok := msg.(*jsonrpc.Request)
	if !ok || m.IsNotification() {
		if resp, ok := msg.(*jsonrpc.Response); ok {
			r.http.answered(resp.ID)
		} else if x, _ := r.match(m); x != nil && len(x.steps) > 0 {
			// What the server sent after a notification goes on the
			// standalone stream.
			r.conns.goServe(nil, func() { r.http.play(r.ctx, x, x.steps, m, r.sendStandalone) })
		}
		w.WriteHeader(http.StatusAccepted)
		return
	}
	x, diff := r.match(m)
	if x == nil {
		r.mismatch(diff)
		writeJSONMessage(w, jsonrpc.NewErrorResponse(m.ID, jsonrpc.NewError(CodeNotInTranscript, "conduittest: request not in the transcript").WithData(map[string]string{"diff": diff})))
		return
	}
	before, after := x.steps, []step(nil)
	for i, st := range x.steps {
		if st.after {
			before, after = x.steps[:i], x.steps[i:]
			break
		}
	}
	if len(after) > 0 {
		// Played once the response is out, on the standalone stream.
		defer r.conns.goServe(nil, func() { r.http.play(r.ctx, x, after, m, r.sendStandalone) })
	}
	if len(before) == 1 && before[0].msg != nil {
		writeJSONMessage(w, remap(before[0].msg, x.req, m))
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	defer context.AfterFunc(r.ctx, cancel)()
	r.http.play(ctx, x, before, m, func(out jsonrpc.Message) error {
		b, err := jsonrpc.EncodeMessage(out)
		if err != nil {
			return err
		}
		return writeEvent(w, fl, b)
	})
}

func writeEvent(w io.Writer, fl http.Flusher, b []byte) error {
	if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", b); err != nil {
		return err
	}
	if fl != nil {
		fl.Flush()
	}
	return nil
}

// maxStandaloneQueue bounds the messages kept for a GET stream not yet
// open.
const maxStandaloneQueue = 1024

// standalone fans messages out to the open GET streams, queueing them
// (boundedly) while none is open.
type standalone struct {
	mu      sync.Mutex
	streams map[chan []byte]bool // guarded by mu
	queue   [][]byte             // guarded by mu
}

// sendStandalone delivers m on the GET streams.
func (r *Replay) sendStandalone(m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	g := &r.gets
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.streams) == 0 {
		if len(g.queue) < maxStandaloneQueue {
			g.queue = append(g.queue, b)
		}
		return nil
	}
	for ch := range g.streams {
		select {
		case ch <- b:
		default: // a stream that does not keep up loses the message
		}
	}
	return nil
}

// serveGet serves one standalone event stream until the client or the
// replay ends it.
func (r *Replay) serveGet(w http.ResponseWriter, req *http.Request) {
	ch := make(chan []byte, maxStandaloneQueue)
	g := &r.gets
	g.mu.Lock()
	if g.streams == nil {
		g.streams = map[chan []byte]bool{}
	}
	g.streams[ch] = true
	for _, b := range g.queue {
		ch <- b
	}
	g.queue = nil
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		delete(g.streams, ch)
		g.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	if fl != nil {
		fl.Flush()
	}
	for {
		select {
		case b := <-ch:
			if writeEvent(w, fl, b) != nil {
				return
			}
		case <-req.Context().Done():
			return
		case <-r.ctx.Done():
			return
		}
	}
}

func writeJSONMessage(w http.ResponseWriter, m jsonrpc.Message) {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// URL returns the replay's Streamable HTTP endpoint on 127.0.0.1, starting
// the listener on the first call.
func (r *Replay) URL() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hs == nil {
		r.hs = httptest.NewServer(r.Handler())
	}
	return r.hs.URL + "/mcp"
}
