package conduittest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// hostSession is what a host does in a session: it returns a line per
// result so that two runs can be compared.
func hostSession(t *testing.T, c *client.Client) []string {
	t.Helper()
	ctx := testCtx(t)
	var out []string
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(tool.Name, "bad_header") { // dropped on modern HTTP only
			out = append(out, "tool "+tool.Name)
		}
	}
	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"echo", map[string]any{"text": "hello"}},
		{"add", map[string]any{"a": 2, "b": 3}},
		{"sample", map[string]any{}},
		{"ask_user", map[string]any{}},
	} {
		res, err := c.CallTool(ctx, call.name, call.args)
		if err != nil {
			t.Fatalf("%s: %v", call.name, err)
		}
		out = append(out, call.name+" "+res.Text())
	}
	var progress []string
	res, err := c.CallTool(ctx, "slow", map[string]any{"steps": 2}, client.WithProgress(func(p protocol.ProgressParams) {
		progress = append(progress, fmt.Sprint(p.Progress))
	}))
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, "slow "+res.Text()+" progress "+strings.Join(progress, ","))
	rr, err := c.ReadResource(ctx, "file:///hello.txt")
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, fmt.Sprintf("read %d contents", len(rr.Contents)))
	return out
}

// recordWith runs session on a client of srv (over via) that records its
// messages, and returns the transcript.
func recordWith(t *testing.T, srv *conduittest.Server, via string, session func(*client.Client), opts ...client.Option) []byte {
	t.Helper()
	var buf bytes.Buffer
	rec := conduittest.NewRecorder(&buf)
	c := connect(t, srv, via, append(opts, rec.Option())...)
	session(c)
	c.Close()
	if err := rec.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func mustRead(t *testing.T, transcript []byte) []conduittest.Entry {
	t.Helper()
	entries, err := conduittest.ReadTranscript(bytes.NewReader(transcript))
	if err != nil {
		t.Fatal(err)
	}
	return entries
}

// record runs hostSession against a conduittest server and returns the
// transcript, written to a file and loaded back, and the session's results.
func record(t *testing.T, era conduittest.Era, via string) ([]conduittest.Entry, []string) {
	t.Helper()
	srv := conduittest.NewServer(t, conduittest.WithEra(era))
	var got []string
	transcript := recordWith(t, srv, via, func(c *client.Client) { got = hostSession(t, c) }, client.WithHandler(&host{}))
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, transcript, 0o600); err != nil {
		t.Fatal(err)
	}
	entries, err := conduittest.LoadTranscript(path)
	if err != nil {
		t.Fatal(err)
	}
	return entries, got
}

func dialReplay(t *testing.T, rp *conduittest.Replay, via string, opts ...client.Option) *client.Client {
	t.Helper()
	ctx := testCtx(t)
	var c *client.Client
	var err error
	if via == "http" {
		c, err = client.Dial(ctx, rp.URL(), opts...)
	} else {
		c, err = client.Connect(ctx, rp.Transport(), opts...)
	}
	if err != nil {
		t.Fatalf("connect to the replay over %s: %v", via, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTranscriptReplay records a session in each era over memory and HTTP
// and replays it over memory and HTTP: the host sees the same results, and
// every recorded request is used.
func TestTranscriptReplay(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Modern, conduittest.Legacy} {
		for _, recVia := range []string{"memory", "http"} {
			entries, want := record(t, era, recVia)
			for _, playVia := range []string{"memory", "http"} {
				t.Run(fmt.Sprintf("%s/recorded-%s/replayed-%s", era, recVia, playVia), func(t *testing.T) {
					rp := conduittest.NewReplay(t, entries)
					c := dialReplay(t, rp, playVia, client.WithHandler(&host{}))
					got := hostSession(t, c)
					if strings.Join(got, "\n") != strings.Join(want, "\n") {
						t.Errorf("replayed session:\n%s\nrecorded session:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
					}
					if u := rp.Unused(); len(u) > 0 {
						t.Errorf("unused recorded requests: %v", u)
					}
					if m := rp.Mismatches(); len(m) > 0 {
						t.Errorf("mismatches: %v", m)
					}
				})
			}
		}
	}
}

// captureTB records Errorf instead of failing the test.
type captureTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (c *captureTB) Helper() {}

func (c *captureTB) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// TestReplayMismatch sends a request the transcript never saw: it fails at
// once with CodeNotInTranscript, and the test is told with a diff.
func TestReplayMismatch(t *testing.T) {
	for _, via := range []string{"memory", "http"} {
		t.Run(via, func(t *testing.T) {
			entries, _ := record(t, conduittest.Legacy, via)
			tb := &captureTB{TB: t}
			rp := conduittest.NewReplay(tb, entries)
			c := dialReplay(t, rp, via, client.WithHandler(&host{}))
			ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Second)
			defer cancel()
			_, err := c.CallTool(ctx, "echo", map[string]any{"text": "bye"})
			if code, ok := jsonrpc.Code(err); !ok || code != conduittest.CodeNotInTranscript {
				t.Fatalf("unrecorded call: %v, want error %d", err, conduittest.CodeNotInTranscript)
			}
			_, err = c.CallTool(ctx, "nope", map[string]any{})
			if code, _ := jsonrpc.Code(err); code != conduittest.CodeNotInTranscript {
				t.Fatalf("unrecorded tool: %v", err)
			}
			tb.mu.Lock()
			defer tb.mu.Unlock()
			if len(tb.errs) != 2 || len(rp.Mismatches()) != 2 {
				t.Fatalf("reported %q, mismatches %q; want 2", tb.errs, rp.Mismatches())
			}
			for _, want := range []string{
				"no request matching tools/call",
				`- params.arguments.text: "hello"`,
				`+ params.arguments.text: "bye"`,
			} {
				if !strings.Contains(tb.errs[0], want) {
					t.Errorf("report lacks %q:\n%s", want, tb.errs[0])
				}
			}
			if !strings.Contains(tb.errs[1], `+ params.name: "nope"`) {
				t.Errorf("second report:\n%s", tb.errs[1])
			}
			if u := rp.Unused(); len(u) == 0 {
				t.Error("Unused is empty though the host skipped the recorded calls")
			}
		})
	}
}

func TestReadTranscriptErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`{"dir":"send","ms":0,"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}` + "\nnot json\n", "line 2"},
		{`{"dir":"sideways","ms":0,"msg":{"jsonrpc":"2.0","id":1,"method":"ping"}}`, `dir "sideways"`},
		{`{"dir":"recv","ms":0,"msg":{"id":1}}`, "line 1"},
	} {
		if _, err := conduittest.ReadTranscript(strings.NewReader(tc.in)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTranscript(%q) = %v, want an error with %q", tc.in, err, tc.want)
		}
	}
}

// TestTranscriptSubscription records a subscription that got an update
// and replays it: the replayed subscription gets the update too.
func TestTranscriptSubscription(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Modern, conduittest.Legacy} {
		t.Run(era.String(), func(t *testing.T) {
			srv := conduittest.NewServer(t, conduittest.WithEra(era))
			entries := mustRead(t, recordWith(t, srv, "memory", func(c *client.Client) {
				subscribeOnce(t, c, srv.NotifyResourceUpdated)
			}))
			for _, via := range []string{"memory", "http"} {
				rp := conduittest.NewReplay(t, entries)
				subscribeOnce(t, dialReplay(t, rp, via), nil)
				if m := rp.Mismatches(); len(m) > 0 {
					t.Errorf("%s: mismatches %v", via, m)
				}
			}
		})
	}
}

// subscribeOnce subscribes to file:///hello.txt, calls trigger (if any)
// and waits for the update.
func subscribeOnce(t *testing.T, c *client.Client, trigger func(uri string)) {
	t.Helper()
	ctx := testCtx(t)
	sub, err := c.Subscribe(ctx, client.SubscribeOptions{Resources: []string{"file:///hello.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if trigger != nil {
		// Later, as a server would announce a change; the replay keeps
		// the gap (the client registers a legacy subscription only after
		// the resources/subscribe response).
		time.Sleep(50 * time.Millisecond)
		trigger("file:///hello.txt")
	}
	select {
	case ev := <-sub.Events():
		if ev.URI != "file:///hello.txt" {
			t.Errorf("event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no update")
	}
}

// TestReplayRemapsMeta replays a modern transcript whose progress token and
// client info differ from what the live client sends: the request still
// matches (only the protocol version counts in _meta) and the progress
// notifications carry the live token.
func TestReplayRemapsMeta(t *testing.T) {
	srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Modern))
	ctx := testCtx(t)
	entries := mustRead(t, recordWith(t, srv, "memory", func(c *client.Client) {
		if _, err := c.CallTool(ctx, "slow", map[string]any{"steps": 2}, client.WithProgress(func(protocol.ProgressParams) {})); err != nil {
			t.Fatal(err)
		}
	}))
	var tok string
	for _, e := range entries {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Meta map[string]json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(e.Msg, &m) == nil && m.Method == "tools/call" {
			tok = string(m.Params.Meta["progressToken"])
		}
	}
	if tok == "" {
		t.Fatal("no progress token recorded")
	}
	for i := range entries {
		b := bytes.ReplaceAll(entries[i].Msg, []byte(`"progressToken":`+tok), []byte(`"progressToken":"recorded-token"`))
		entries[i].Msg = bytes.ReplaceAll(b, []byte(`"version":"`), []byte(`"version":"9.9.9-`))
	}
	rp := conduittest.NewReplay(t, entries)
	c := dialReplay(t, rp, "memory")
	var got []float64
	res, err := c.CallTool(ctx, "slow", map[string]any{"steps": 2}, client.WithProgress(func(p protocol.ProgressParams) {
		got = append(got, p.Progress)
	}))
	if err != nil || len(got) != 2 {
		t.Fatalf("replayed slow: %v, %v, progress %v; want 2 updates", res, err, got)
	}
}

// barrierHost answers sampling only once n requests are waiting, so that
// the calls that caused them overlap.
type barrierHost struct {
	host
	n       int
	mu      sync.Mutex
	waiting int
	all     chan struct{}
}

func (h *barrierHost) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	h.mu.Lock()
	h.waiting++
	if h.waiting == h.n {
		close(h.all)
	}
	h.mu.Unlock()
	select {
	case <-h.all:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return h.host.CreateMessage(ctx, p)
}

// TestReplayConcurrentServerRequests replays one recorded call that made
// a sampling request to two calls at once: each gets its own server
// request and each completes, though the transcript holds one server
// request id.
func TestReplayConcurrentServerRequests(t *testing.T) {
	for _, via := range []string{"memory", "http"} {
		t.Run(via, func(t *testing.T) {
			srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy))
			ctx := testCtx(t)
			entries := mustRead(t, recordWith(t, srv, "memory", func(c *client.Client) {
				if _, err := c.CallTool(ctx, "sample", map[string]any{}); err != nil {
					t.Fatal(err)
				}
			}, client.WithHandler(&host{})))
			rp := conduittest.NewReplay(t, entries)
			c := dialReplay(t, rp, via, client.WithHandler(&barrierHost{n: 2, all: make(chan struct{})}))
			callCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make([]error, 2)
			for i := range errs {
				wg.Go(func() {
					_, errs[i] = c.CallTool(callCtx, "sample", map[string]any{})
				})
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					t.Errorf("call %d: %v", i, err)
				}
			}
		})
	}
}

// TestReplayLongTranscript replays a transcript of 200,000 copies of one
// call to as many calls: each finds its copy without scanning the ones
// used before it (which made the replay quadratic: minutes instead of
// seconds).
func TestReplayLongTranscript(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("a large transcript")
	}
	const n = 200_000
	const call = `"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello, a typical argument"}}}`
	entries := make([]conduittest.Entry, 0, 2*n)
	for i := range n {
		entries = append(entries,
			conduittest.Entry{Dir: "send", Msg: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,`+call, i+1))},
			conduittest.Entry{Dir: "recv", Msg: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[]}}`, i+1))})
	}
	rp := conduittest.NewReplay(t, entries)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := rp.ServeStdio(ctx, inR, outW)
		outW.Close() // the scan below ends
		served <- err
	}()
	defer func() {
		inW.Close()
		outR.Close() // a response still being written fails
		<-served
	}()
	go func() {
		for i := range n {
			if _, err := fmt.Fprintf(inW, `{"jsonrpc":"2.0","id":%d,`+call+"\n", i+1); err != nil {
				return
			}
		}
	}()
	sc := bufio.NewScanner(outR)
	for got := 0; got < n; got++ {
		if !sc.Scan() {
			t.Fatalf("%d responses of %d, then the replay ended (context: %v)", got, n, ctx.Err())
		}
		if bytes.Contains(sc.Bytes(), []byte(`"error"`)) {
			t.Fatalf("response %d: %s", got+1, sc.Bytes())
		}
	}
	if u := rp.Unused(); len(u) > 0 {
		t.Errorf("%d recorded calls unused", len(u))
	}
}

// TestReplayFarGap: a message recorded ages after the response it
// follows (a gap past what a Duration holds) is replayed after the
// longest gap a replay reproduces, one second, not at once.
func TestReplayFarGap(t *testing.T) {
	entries := []conduittest.Entry{
		{Dir: "send", Ms: 0, Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"}}`)},
		{Dir: "recv", Ms: 1, Msg: json.RawMessage(`{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`)},
		{Dir: "recv", Ms: 1e16, Msg: json.RawMessage(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)},
	}
	rp := conduittest.NewReplay(t, entries)
	ctx := testCtx(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		err := rp.ServeStdio(ctx, inR, outW)
		outW.Close()
		served <- err
	}()
	defer func() {
		inW.Close()
		outR.Close()
		<-served
	}()
	go fmt.Fprintln(inW, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo"}}`)
	sc := bufio.NewScanner(outR)
	if !sc.Scan() || !bytes.Contains(sc.Bytes(), []byte(`"id":7`)) {
		t.Fatalf("first message %q, want the response", sc.Bytes())
	}
	answered := time.Now()
	if !sc.Scan() || !bytes.Contains(sc.Bytes(), []byte("list_changed")) {
		t.Fatalf("second message %q, want the notification", sc.Bytes())
	}
	if gap := time.Since(answered); gap < 900*time.Millisecond {
		t.Errorf("notification %v after the response, want the one-second bound", gap)
	}
}
