package testserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// watchdog bounds every wait of these tests so a bug fails instead of
// hanging; it is never used to assert timing.
const watchdog = 10 * time.Second

const modernVersion = "2026-07-28"

// modernMeta returns a modern _meta with caps (raw JSON, "" for {}).
func modernMeta(caps string) map[string]any {
	if caps == "" {
		caps = "{}"
	}
	return map[string]any{
		"io.modelcontextprotocol/protocolVersion":    modernVersion,
		"io.modelcontextprotocol/clientCapabilities": json.RawMessage(caps),
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "test", "version": "1"},
	}
}

// withMeta returns params plus _meta.
func withMeta(params map[string]any, meta map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range params {
		out[k] = v
	}
	out["_meta"] = meta
	return out
}

// ---- stream client ----

// streamClient drives Server.ServeStream over io.Pipes with raw JSON-RPC.
type streamClient struct {
	t      *testing.T
	w      *io.PipeWriter // client -> server
	lines  chan []byte    // server -> client lines
	served chan error     // ServeStream's result
	nextID atomic.Int64
}

func newStreamClient(t *testing.T, s *Server) *streamClient {
	t.Helper()
	cr, cw := io.Pipe() // client writes requests
	sr, sw := io.Pipe() // server writes responses
	c := &streamClient{t: t, w: cw, lines: make(chan []byte, 1024), served: make(chan error, 1)}
	go func() { c.served <- s.ServeStream(context.Background(), cr, sw) }()
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer close(c.lines)
		br := bufio.NewReaderSize(sr, 1<<20)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				c.lines <- bytes.TrimSpace(line)
			}
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		cw.Close()
		select {
		case <-c.served:
		case <-time.After(watchdog):
			t.Errorf("ServeStream did not return after stdin closed")
		}
		sr.Close()
		<-readerDone
	})
	return c
}

func (c *streamClient) sendRaw(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		c.t.Fatalf("writing to server: %v", err)
	}
}

func (c *streamClient) send(m jsonrpc.Message) {
	c.t.Helper()
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
}

// request sends method with params and returns the new id.
func (c *streamClient) request(method string, params any) jsonrpc.ID {
	c.t.Helper()
	id := jsonrpc.Int64ID(c.nextID.Add(1))
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(req)
	return id
}

func (c *streamClient) notify(method string, params any) {
	c.t.Helper()
	n, err := jsonrpc.NewNotification(method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	c.send(n)
}

// next returns the next decoded message from the server.
func (c *streamClient) next() jsonrpc.Message {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("server closed the stream")
		}
		m, err := jsonrpc.DecodeMessage(line)
		if err != nil {
			c.t.Fatalf("decoding %s: %v", line, err)
		}
		return m
	case <-time.After(watchdog):
		c.t.Fatalf("watchdog: no message from server")
	}
	return nil
}

// nextLine returns the next raw line.
func (c *streamClient) nextLine() []byte {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatalf("server closed the stream")
		}
		return line
	case <-time.After(watchdog):
		c.t.Fatalf("watchdog: no line from server")
	}
	return nil
}

// await reads until the response to id, returning it and the other
// messages seen before it.
func (c *streamClient) await(id jsonrpc.ID) (*jsonrpc.Response, []*jsonrpc.Request) {
	c.t.Helper()
	var others []*jsonrpc.Request
	for {
		switch m := c.next().(type) {
		case *jsonrpc.Response:
			if m.ID == id {
				return m, others
			}
			c.t.Fatalf("unexpected response id %v", m.ID)
		case *jsonrpc.Request:
			others = append(others, m)
		}
	}
}

// call sends a request and returns its response.
func (c *streamClient) call(method string, params any) *jsonrpc.Response {
	c.t.Helper()
	resp, _ := c.await(c.request(method, params))
	return resp
}

// initialize runs the legacy handshake with caps.
func (c *streamClient) initialize(version, caps string) map[string]any {
	c.t.Helper()
	if caps == "" {
		caps = "{}"
	}
	resp := c.call("initialize", map[string]any{
		"protocolVersion": version, "capabilities": json.RawMessage(caps),
		"clientInfo": map[string]any{"name": "test", "version": "1"},
	})
	res := result(c.t, resp)
	c.notify("notifications/initialized", nil)
	return res
}

// result decodes a successful response's result.
func result(t *testing.T, resp *jsonrpc.Response) map[string]any {
	t.Helper()
	if resp.Error != nil {
		t.Fatalf("response error: %v", resp.Error)
	}
	var m map[string]any
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		t.Fatalf("decoding result %s: %v", resp.Result, err)
	}
	return m
}

// rpcErr returns the response's error code, failing if it is a result.
func rpcErr(t *testing.T, resp *jsonrpc.Response) *jsonrpc.Error {
	t.Helper()
	if resp.Error == nil {
		t.Fatalf("response = result %s, want an error", resp.Result)
	}
	return resp.Error
}

func firstText(t *testing.T, res map[string]any) string {
	t.Helper()
	content, _ := res["content"].([]any)
	if len(content) == 0 {
		t.Fatalf("result has no content: %v", res)
	}
	block, _ := content[0].(map[string]any)
	s, _ := block["text"].(string)
	return s
}

// ---- HTTP client ----

type httpResult struct {
	status   int
	header   http.Header
	ctype    string
	body     []byte
	messages []jsonrpc.Message // decoded JSON body or SSE data events
	events   []sseTestEvent
}

type sseTestEvent struct {
	id, event, data string
	retry           string
}

// response returns the last JSON-RPC response in the result.
func (r *httpResult) response(t *testing.T) *jsonrpc.Response {
	t.Helper()
	for i := len(r.messages) - 1; i >= 0; i-- {
		if resp, ok := r.messages[i].(*jsonrpc.Response); ok {
			return resp
		}
	}
	t.Fatalf("no JSON-RPC response in %d %s body %q", r.status, r.ctype, r.body)
	return nil
}

// parseSSE parses a complete event-stream body.
func parseSSE(body []byte) []sseTestEvent {
	var out []sseTestEvent
	var cur sseTestEvent
	var data []string
	has := false
	for _, line := range strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n") {
		if line == "" {
			if has {
				cur.data = strings.Join(data, "\n")
				out = append(out, cur)
			}
			cur, data, has = sseTestEvent{}, nil, false
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimPrefix(v, " ")
		has = true
		switch k {
		case "id":
			cur.id = v
		case "event":
			cur.event = v
		case "data":
			data = append(data, v)
		case "retry":
			cur.retry = v
		}
	}
	return out
}

func decodeHTTP(t *testing.T, resp *http.Response) *httpResult {
	t.Helper()
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	r := &httpResult{status: resp.StatusCode, header: resp.Header, ctype: resp.Header.Get("Content-Type"), body: body}
	if err != nil {
		// A broken stream: keep what arrived.
		r.body = body
	}
	switch {
	case strings.HasPrefix(r.ctype, "application/json"):
		if m, err := jsonrpc.DecodeMessage(body); err == nil {
			r.messages = append(r.messages, m)
		}
	case strings.HasPrefix(r.ctype, "text/event-stream"):
		r.events = parseSSE(body)
		for _, ev := range r.events {
			if strings.TrimSpace(ev.data) == "" {
				continue
			}
			if m, err := jsonrpc.DecodeMessage([]byte(ev.data)); err == nil {
				r.messages = append(r.messages, m)
			}
		}
	}
	return r
}

// post sends one JSON-RPC message to url with modern or custom headers.
func post(t *testing.T, url string, msg any, hdr http.Header) *httpResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	r, err := doPost(ctx, url, msg, hdr)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	return decodeHTTP(t, r)
}

func doPost(ctx context.Context, url string, msg any, hdr http.Header) (*http.Response, error) {
	var body []byte
	switch m := msg.(type) {
	case string:
		body = []byte(m)
	case jsonrpc.Message:
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			return nil, err
		}
		body = b
	default:
		b, err := json.Marshal(m)
		if err != nil {
			return nil, err
		}
		body = b
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, vs := range hdr {
		req.Header[k] = vs
	}
	return http.DefaultClient.Do(req)
}

// sseStream reads an SSE response body for a test.
type sseStream struct {
	t      *testing.T
	br     *bufio.Reader
	lastID string // the value of the last "id:" line read
}

func newSSEStream(t *testing.T, body io.Reader) *sseStream {
	return &sseStream{t: t, br: bufio.NewReader(body)}
}

// openSSE POSTs msg to url and returns the response's event stream, which
// must be one; the body is closed when the test ends.
func openSSE(t *testing.T, url string, msg any, hdr http.Header) *sseStream {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	t.Cleanup(cancel)
	resp, err := doPost(ctx, url, msg, hdr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("POST stream content type = %q", ct)
	}
	return newSSEStream(t, resp.Body)
}

// data returns the payload of the next non-empty "data:" line.
func (s *sseStream) data() string {
	s.t.Helper()
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			s.t.Fatalf("reading SSE stream: %v", err)
		}
		line = strings.TrimRight(line, "\r\n")
		if id, ok := strings.CutPrefix(line, "id: "); ok {
			s.lastID = id
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && d != "" {
			return d
		}
	}
}

// message decodes the next data payload as a JSON-RPC message.
func (s *sseStream) message() jsonrpc.Message {
	s.t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(s.data()))
	if err != nil {
		s.t.Fatal(err)
	}
	return m
}

// modernRequest builds a modern request message with the HTTP headers a
// modern client sends.
func modernRequest(t *testing.T, id int64, method string, params map[string]any, caps string) (*jsonrpc.Request, http.Header) {
	t.Helper()
	req, err := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, withMeta(params, modernMeta(caps)))
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("MCP-Protocol-Version", modernVersion)
	h.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok {
		h.Set("Mcp-Name", n)
	}
	if u, ok := params["uri"].(string); ok {
		h.Set("Mcp-Name", u)
	}
	return req, h
}

// startHTTP serves h on an httptest server, closing srv before it.
func startHTTP(t *testing.T, srv *Server, h http.Handler) string {
	t.Helper()
	ts := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.Close()
		ts.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return ts.URL
}
