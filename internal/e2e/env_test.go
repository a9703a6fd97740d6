package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// Transport names used in the matrix (columns of the table).
const (
	kindStdio = "stdio"
	kindHTTP  = "http"
	kindWS    = "websocket"
)

var kinds = []string{kindStdio, kindHTTP, kindWS}

// serverSpec describes the server of one case.
type serverSpec struct {
	era    testserver.Era
	faults []testserver.Fault
	banner []string // stdio only: non-JSON lines before serving
	sse    bool     // HTTP: answer every request with an event stream
}

// env is one running server for one case: an httptest server in this
// process for HTTP and WebSocket, a recipe for the cmd/testserver binary
// (one process per transport Connect) for stdio.
type env struct {
	kind   string
	srv    *testserver.Server // http, websocket
	hs     *httptest.Server   // http, websocket
	args   []string           // stdio
	record string             // stdio: the -record file
	marker string             // stdio: the -exit-marker file
}

// newEnv starts the server of spec for transport kind. Everything is
// stopped by t.Cleanup.
func newEnv(t *testing.T, kind string, spec serverSpec) *env {
	t.Helper()
	e := &env{kind: kind}
	switch kind {
	case kindStdio:
		dir := t.TempDir()
		e.record = filepath.Join(dir, "record.jsonl")
		e.marker = filepath.Join(dir, "exited")
		e.args = []string{"-era", spec.era.String(), "-record", e.record, "-exit-marker", e.marker}
		for _, f := range spec.faults {
			e.args = append(e.args, "-fault", faultSpec(t, f))
		}
		for _, b := range spec.banner {
			e.args = append(e.args, "-banner", b)
		}
	default:
		e.srv = testserver.New(testserver.Options{Era: spec.era, Faults: spec.faults, SSEResponses: spec.sse})
		var h http.Handler = e.srv.Handler()
		if kind == kindWS {
			h = e.srv.WebSocketHandler()
		}
		e.hs = httptest.NewServer(h) // httptest binds 127.0.0.1
		t.Cleanup(func() {
			e.srv.Close() // ends held streams first
			e.hs.Close()
		})
	}
	return e
}

// transport returns a fresh transport to the server; maxMsg (if > 0) bounds
// one incoming message and tokens (if not nil) supplies HTTP bearer tokens.
func (e *env) transport(maxMsg int, tokens transport.TokenSource) transport.Transport {
	switch e.kind {
	case kindStdio:
		st := transport.Command(serverBin, e.args...)
		st.MaxMessageSize = maxMsg
		st.TerminateDelay, st.KillDelay = time.Second, time.Second
		return st
	case kindHTTP:
		return &transport.StreamableHTTP{URL: e.hs.URL, MaxMessageSize: maxMsg, TokenSource: tokens}
	default:
		return &transport.WebSocket{URL: "ws" + strings.TrimPrefix(e.hs.URL, "http"), MaxMessageSize: int64(maxMsg)}
	}
}

// url is the endpoint for client.Dial (HTTP and WebSocket).
func (e *env) url() string {
	if e.kind == kindWS {
		return "ws" + strings.TrimPrefix(e.hs.URL, "http")
	}
	return e.hs.URL
}

// connect connects a client with opts (client.Dial for HTTP and WebSocket
// when dial is set, else client.Connect).
func (e *env) connect(ctx context.Context, dial bool, maxMsg int, tokens transport.TokenSource, opts ...client.Option) (*client.Client, error) {
	if dial && e.kind != kindStdio {
		return client.Dial(ctx, e.url(), opts...)
	}
	return client.Connect(ctx, e.transport(maxMsg, tokens), opts...)
}

// process is what one server process (stdio) or the whole server (HTTP,
// WebSocket) received.
type process struct {
	PID      int                   `json:"pid"`
	Exit     string                `json:"exit"`
	Received []testserver.Recorded `json:"received"`
}

// received returns what the server received: one entry per stdio process
// (in the order they stopped), or one entry for the in-process server. Call
// it after the client is closed.
func (e *env) received(t *testing.T) []process {
	t.Helper()
	if e.kind != kindStdio {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.srv.WaitIdle(ctx); err != nil {
			t.Errorf("server did not become idle: %v", err)
		}
		return []process{{Received: e.srv.Received()}}
	}
	data, err := os.ReadFile(e.record)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []process
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var p process
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatalf("record line %q: %v", sc.Text(), err)
		}
		out = append(out, p)
	}
	return out
}

// methods flattens the JSON-RPC methods the server received, in order,
// leaving out the bodiless HTTP GET (standalone stream, resumption) and
// DELETE (session end) requests, whose timing relative to the JSON-RPC
// messages is not fixed. A response from the client shows as "".
func methods(procs []process) []string {
	out := []string{}
	for _, p := range procs {
		for _, r := range p.Received {
			if r.HTTPMethod != "" && r.HTTPMethod != http.MethodPost {
				continue
			}
			out = append(out, r.Method)
		}
	}
	return out
}

// faultSpec renders f in the -fault syntax of cmd/testserver
// (testserver.ParseFault), failing the test for fields it cannot carry.
func faultSpec(t *testing.T, f testserver.Fault) string {
	t.Helper()
	var kv []string
	add := func(k, v string) {
		if strings.ContainsAny(v, ",") && !json.Valid([]byte(v)) {
			t.Fatalf("fault %v: %s=%q cannot be written as a flag", f.Kind, k, v)
		}
		kv = append(kv, k+"="+v)
	}
	if f.Method != "" {
		add("method", f.Method)
	}
	if f.Transport != "" {
		add("transport", f.Transport)
	}
	if f.Skip != 0 {
		add("skip", strconv.Itoa(f.Skip))
	}
	if f.Times != 0 {
		add("times", strconv.Itoa(f.Times))
	}
	if f.Code != 0 {
		add("code", strconv.FormatInt(f.Code, 10))
	}
	if f.Message != "" {
		add("message", f.Message)
	}
	if f.Data != nil {
		add("data", string(f.Data))
	}
	if f.Status != 0 {
		add("status", strconv.Itoa(f.Status))
	}
	if len(f.Header) != 0 || f.ContentType != "" {
		t.Fatalf("fault %v: HTTP headers on stdio", f.Kind)
	}
	if f.Body != "" {
		add("body", f.Body)
	}
	if f.Supported != nil {
		add("supported", strings.Join(f.Supported, "|"))
	}
	if f.Version != "" {
		add("version", f.Version)
	}
	if f.Result != nil {
		add("result", string(f.Result))
	}
	if f.Size != 0 {
		add("size", strconv.Itoa(f.Size))
	}
	s := f.Kind.String()
	if len(kv) > 0 {
		s += ":" + strings.Join(kv, ",")
	}
	return s
}
