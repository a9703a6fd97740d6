package testserver

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

func TestMRTRPromptAndResource(t *testing.T) {
	srv := New(Options{TTL: 5000 * 1e6})
	defer srv.Close()
	c := newStreamClient(t, srv)
	caps := `{"elicitation":{}}`
	cases := []struct {
		method, key string
		params      map[string]any
		answer      map[string]any
		check       func(res map[string]any) bool
	}{
		{"prompts/get", "topic", map[string]any{"name": "ask_prompt"}, map[string]any{"action": "accept", "content": map[string]any{"topic": "Go"}},
			func(res map[string]any) bool {
				return res["messages"].([]any)[0].(map[string]any)["content"].(map[string]any)["text"] == "Tell me about Go."
			}},
		{"resources/read", "password", map[string]any{"uri": "file:///secret.txt"}, map[string]any{"action": "accept", "content": map[string]any{"password": "pw"}},
			func(res map[string]any) bool {
				_, cached := res["ttlMs"]
				return res["contents"].([]any)[0].(map[string]any)["text"] == "the secret is 42" && !cached
			}},
	}
	for _, tc := range cases {
		t.Run(tc.method, func(t *testing.T) {
			first := result(t, c.call(tc.method, withMeta(tc.params, modernMeta(caps))))
			if first["resultType"] != "input_required" {
				t.Fatalf("first = %v", first)
			}
			retry := withMeta(tc.params, modernMeta(caps))
			retry["requestState"] = first["requestState"]
			retry["inputResponses"] = map[string]any{tc.key: tc.answer}
			if res := result(t, c.call(tc.method, retry)); !tc.check(res) {
				t.Errorf("retry = %v", res)
			}
		})
	}
	t.Run("legacy", func(t *testing.T) {
		lc := newStreamClient(t, srv)
		lc.initialize("2025-11-25", caps)
		id := lc.request("resources/read", map[string]any{"uri": "file:///secret.txt"})
		sreq := lc.next().(*jsonrpc.Request)
		if sreq.Method != "elicitation/create" {
			t.Fatalf("server request = %s", sreq.Method)
		}
		resp, _ := jsonrpc.NewResponse(sreq.ID, map[string]any{"action": "accept", "content": map[string]any{"password": "x"}})
		lc.send(resp)
		final, _ := lc.await(id)
		if !strings.Contains(string(final.Result), "the secret is 42") {
			t.Errorf("legacy secret = %s", final.Result)
		}
	})
}

func TestAbortListens(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	c := newStreamClient(t, srv)
	id := c.request("subscriptions/listen", withMeta(map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, modernMeta("")))
	c.next() // ack

	req, h := modernRequest(t, 9, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true}}, "")
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	resp, err := doPost(ctx, url, req, h)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "acknowledged") {
		t.Fatalf("HTTP listen first line %q: %v", line, err)
	}

	srv.AbortListens()
	n := c.next().(*jsonrpc.Request)
	var p map[string]any
	_ = json.Unmarshal(n.Params, &p)
	if n.Method != "notifications/cancelled" || p["requestId"] != float64(mustInt(id)) {
		t.Errorf("stdio abort = %s %s", n.Method, n.Params)
	}
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if strings.Contains(string(rest), `"result"`) {
		t.Errorf("HTTP abort sent a result: %s", rest)
	}
}

func mustInt(id jsonrpc.ID) int64 {
	n, _ := id.Int64()
	return n
}

func TestPingClients(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	c := newStreamClient(t, srv)
	c.initialize("2025-11-25", "")
	sid := legacyInit(t, url, "2025-11-25", "")

	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	get.Header = legacyHeaders(sid, "2025-11-25")
	get.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	errc := make(chan error, 1)
	go func() { errc <- srv.PingClients(ctx) }()
	// The HTTP session's ping arrives on its GET stream; the answer is
	// POSTed. This goroutine reports instead of failing the test.
	httpDone := make(chan string, 1)
	go func() {
		br := bufio.NewReader(resp.Body)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				httpDone <- "GET stream: " + err.Error()
				return
			}
			d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: ")
			if !ok {
				continue
			}
			m, _ := jsonrpc.DecodeMessage([]byte(d))
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "ping" {
				r, _ := jsonrpc.NewResponse(req.ID, nil)
				pr, err := doPost(ctx, url, r, legacyHeaders(sid, "2025-11-25"))
				if err != nil {
					httpDone <- err.Error()
					return
				}
				pr.Body.Close()
				if pr.StatusCode != 202 {
					httpDone <- "posting the answer: " + pr.Status
					return
				}
				httpDone <- ""
				return
			}
		}
	}()
	ping := c.next().(*jsonrpc.Request)
	if ping.Method != "ping" {
		t.Fatalf("stdio got %s, want ping", ping.Method)
	}
	r, _ := jsonrpc.NewResponse(ping.ID, nil)
	c.send(r)
	if msg := <-httpDone; msg != "" {
		t.Error(msg)
	}
	if err := <-errc; err != nil {
		t.Errorf("PingClients = %v", err)
	}
}

func TestPipe(t *testing.T) {
	srv := New(Options{})
	defer srv.Close()
	r, w, wait := srv.Pipe(context.Background())
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "server/discover", withMeta(nil, modernMeta("")))
	b, _ := jsonrpc.EncodeMessage(req)
	go func() {
		_, _ = w.Write(append(b, '\n'))
		w.Close()
	}()
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if err := wait(); err != nil {
		t.Errorf("wait = %v", err)
	}
	if !strings.Contains(string(out), `"supportedVersions"`) {
		t.Errorf("pipe output = %s", out)
	}
}

func TestSSEHandlerServerRequest(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.SSEHandler())
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	defer cancel()
	get, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	nextData := newSSEStream(t, resp.Body).data
	endpoint := url + nextData()
	init, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"elicitation": map[string]any{}}, "clientInfo": map[string]any{"name": "t", "version": "1"}})
	post(t, endpoint, init, nil)
	nextData() // initialize result
	call, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(2), "tools/call", map[string]any{"name": "ask_user"})
	post(t, endpoint, call, nil)
	m, _ := jsonrpc.DecodeMessage([]byte(nextData()))
	sreq, ok := m.(*jsonrpc.Request)
	if !ok || sreq.Method != "elicitation/create" {
		t.Fatalf("stream message = %+v, want elicitation/create", m)
	}
	answer, _ := jsonrpc.NewResponse(sreq.ID, map[string]any{"action": "decline"})
	if r := post(t, endpoint, answer, nil); r.status != 202 {
		t.Fatalf("posting the answer: %d", r.status)
	}
	m, _ = jsonrpc.DecodeMessage([]byte(nextData()))
	if final, ok := m.(*jsonrpc.Response); !ok || firstText(t, result(t, final)) != "decline" {
		t.Errorf("final = %+v", m)
	}
}

func TestHTTPLegacyCancel(t *testing.T) {
	srv := New(Options{})
	url := startHTTP(t, srv, srv.Handler())
	sid := legacyInit(t, url, "2025-11-25", `{"elicitation":{}}`)
	h := legacyHeaders(sid, "2025-11-25")

	// ask_user waits for the client's answer, which never comes: the
	// elicitation request on the POST stream is the sync point.
	st := openSSE(t, url, mustReq(t, 3, "tools/call", map[string]any{"name": "ask_user"}), h)
	for !strings.Contains(st.data(), "elicitation/create") { // skip to it
	}
	n, _ := jsonrpc.NewNotification("notifications/cancelled", map[string]any{"requestId": 3, "reason": "test"})
	if r := post(t, url, n, h); r.status != 202 {
		t.Fatalf("cancel status = %d", r.status)
	}
	// The stream ends without a response.
	var rest strings.Builder
	if _, err := io.Copy(&rest, st.br); err != nil {
		t.Fatalf("stream did not end cleanly: %v", err)
	}
	if strings.Contains(rest.String(), `"id":3`) {
		t.Errorf("cancelled request answered: %s", rest.String())
	}
}

func mustReq(t *testing.T, id int64, method string, params any) *jsonrpc.Request {
	t.Helper()
	req, err := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	return req
}
