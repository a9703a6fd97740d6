package client_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/conduitmcp/conduit/internal/leakcheck"
	"io"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testrecord"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// stdioEnv makes the test binary serve the test server on stdin/stdout:
// the stdio transport tests run os.Args[0] with it set (fork and exec).
const stdioEnv = "CONDUIT_CLIENT_TEST_STDIO"

func TestMain(m *testing.M) {
	if spec := os.Getenv(stdioEnv); spec != "" {
		os.Exit(serveStdio(spec))
	}
	goleak.VerifyTestMain(flushPool{m})
}

// flushPool runs the tests, then closes the idle connections of the
// shared pools (transport.DefaultPool, http.DefaultTransport), which belong to the pools and not to
// any client, before goleak looks for goroutines left behind.
type flushPool struct{ m *testing.M }

func (f flushPool) Run() int {
	code := f.m.Run()
	leakcheck.Flush()
	return code
}

// serveStdio runs a test server on stdio; spec is the JSON of
// testserver.Options (a subset that survives JSON).
func serveStdio(spec string) int {
	var o stdioOptions
	if err := json.Unmarshal([]byte(spec), &o); err != nil {
		return 2
	}
	so := o.options()
	if o.FaultsOnce != "" {
		// The faults apply to the first server process only: a respawned
		// one serves normally.
		if _, err := os.Stat(o.FaultsOnce); err == nil {
			so.Faults = nil
		} else if err := os.WriteFile(o.FaultsOnce, nil, 0o600); err != nil {
			return 2
		}
	}
	srv := testserver.New(so)
	defer srv.Close()
	var in io.Reader = os.Stdin
	if o.CountFile != "" {
		in = countingReader(os.Stdin, o.CountFile)
	}
	err := srv.ServeStream(context.Background(), in, os.Stdout)
	if errors.Is(err, testserver.ErrExit) {
		return 3
	}
	return 0
}

// stdioOptions are the test server options passed to a stdio child.
type stdioOptions struct {
	Era      testserver.Era
	PageSize int
	TTLms    int64
	Scope    string
	Faults   []testserver.Fault
	Legacy   []string
	// FaultsOnce, when set, is a marker file: only the process that
	// creates it applies Faults.
	FaultsOnce string
	// CountFile, when set, gets one line per tools/call request any
	// server process received (the count survives respawns).
	CountFile string
}

// countingReader passes r's lines on and appends a line to path for each
// tools/call request among them.
func countingReader(r io.Reader, path string) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			if bytes.Contains(line, []byte(`"method":"tools/call"`)) {
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600); err == nil {
					f.WriteString("tools/call\n")
					f.Close()
				}
			}
			if _, err := pw.Write(append(line, '\n')); err != nil {
				return
			}
		}
		pw.CloseWithError(sc.Err())
	}()
	return pr
}

func (o stdioOptions) options() testserver.Options {
	return testserver.Options{Era: o.Era, PageSize: o.PageSize, TTL: time.Duration(o.TTLms) * time.Millisecond, CacheScope: o.Scope, Faults: o.Faults, LegacyVersions: o.Legacy}
}

// Transports of the test matrix.
const (
	tPipe  = "pipe"
	tStdio = "stdio"
	tHTTP  = "http"
	tWS    = "websocket"
	tSSE   = "sse" // HTTP+SSE (reached through Dial's fallback); not in allTransports
)

var allTransports = []string{tPipe, tStdio, tHTTP, tWS}

// Eras of the test matrix: the client's protocol mode against a dual-era
// server.
var allEras = []struct {
	name string
	p    client.Protocol
}{
	{"modern", client.Modern},
	{"legacy", client.Legacy},
}

// fixture is a connected client and its server.
type fixture struct {
	c   *client.Client
	srv *testserver.Server // nil for stdio (the server is in the child)
	ts  *httptest.Server   // HTTP and WebSocket only
}

// connect starts a test server with so on transport tr and connects a
// client with opts. Everything is closed when the test ends.
func connect(t *testing.T, tr string, so testserver.Options, opts ...client.Option) *fixture {
	t.Helper()
	f, err := tryConnect(t, tr, so, opts...)
	if err != nil {
		t.Fatalf("connecting over %s: %v", tr, err)
	}
	return f
}

// stdioServer is the transport of tStdio: this test binary, serving so.
func stdioServer(t *testing.T, so testserver.Options) *transport.Stdio {
	t.Helper()
	spec, err := json.Marshal(stdioOptions{Era: so.Era, PageSize: so.PageSize, TTLms: so.TTL.Milliseconds(), Scope: so.CacheScope, Faults: so.Faults, Legacy: so.LegacyVersions})
	if err != nil {
		t.Fatalf("encoding the stdio server options: %v", err)
	}
	cmd := transport.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{stdioEnv + "=" + string(spec)}
	return cmd
}

func tryConnect(t *testing.T, tr string, so testserver.Options, opts ...client.Option) (*fixture, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fixture{}
	var err error
	switch tr {
	case tPipe:
		srv := testserver.New(so)
		f.srv = srv
		pipe, end := transport.NewPipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = srv.ServeStream(context.Background(), end, end)
		}()
		t.Cleanup(func() {
			end.Close()
			srv.Close()
			<-served
		})
		f.c, err = client.Connect(ctx, pipe, opts...)
	case tStdio:
		f.c, err = client.Connect(ctx, stdioServer(t, so), opts...)
	case tHTTP, tWS, tSSE:
		srv := testserver.New(so)
		f.srv = srv
		switch tr {
		case tHTTP:
			f.ts = httptest.NewServer(srv.Handler())
		case tSSE:
			f.ts = httptest.NewServer(srv.SSEHandler())
		default:
			f.ts = httptest.NewServer(srv.WebSocketHandler())
		}
		ts := f.ts
		t.Cleanup(func() {
			srv.Close()
			ts.Close()
		})
		url := ts.URL
		if tr == tWS {
			url = "ws" + strings.TrimPrefix(url, "http")
		}
		f.c, err = client.Dial(ctx, url, opts...)
	default:
		t.Fatalf("unknown transport %q", tr)
	}
	if err != nil {
		return nil, err
	}
	c := f.c
	t.Cleanup(func() { c.Close() })
	return f, nil
}

// netMatrix runs fn, one after another, for every era over pipe,
// Streamable HTTP and WebSocket, with a client connected in that era and
// a context bounded at 10 seconds.
func netMatrix(t *testing.T, fn func(t *testing.T, ctx context.Context, f *fixture, tr string, p client.Protocol)) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP, tWS} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				fn(t, ctx, f, tr, era.p)
			})
		}
	}
}

// matrix runs fn for every era × transport.
func matrix(t *testing.T, fn func(t *testing.T, tr string, p client.Protocol)) {
	for _, era := range allEras {
		for _, tr := range allTransports {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				fn(t, tr, era.p)
			})
		}
	}
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitBound bounds the waits for what must happen; reaching it is a test
// failure, not a timing assertion.
const waitBound = 10 * time.Second

// eventually reports whether cond holds within waitBound, polling it every
// few milliseconds.
func eventually(cond func() bool) bool {
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// await returns the next value from ch; when none comes within waitBound
// it fails the test with what.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(waitBound):
		t.Fatal(what)
		panic("unreachable")
	}
}

// record is a list that goroutines add to under its lock (the shared
// testrecord.Record, under the names this package's tests use).
type record[T any] struct{ testrecord.Record[T] }

func (r *record[T]) add(v T) { r.Add(v) }

// all returns a copy of what was added so far.
func (r *record[T]) all() []T { return r.All() }

// pipeCase is a table row of the tests that connect over a pipe in one
// era with some options.
type pipeCase struct {
	name string
	p    client.Protocol
	opts []client.Option
}

// connect connects as the row says.
func (c pipeCase) connect(t *testing.T) *fixture {
	return connect(t, tPipe, testserver.Options{}, append(slices.Clone(c.opts), client.WithProtocol(c.p))...)
}
