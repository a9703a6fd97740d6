package events_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// stdioEnv makes the test binary serve a test server on stdin/stdout,
// configured by the JSON of testserver.Options in the variable.
const stdioEnv = "CONDUIT_EVENTS_TEST_STDIO"

func TestMain(m *testing.M) {
	if spec := os.Getenv(stdioEnv); spec != "" {
		var o testserver.Options
		if json.Unmarshal([]byte(spec), &o) != nil {
			os.Exit(2)
		}
		srv := testserver.New(o)
		_ = srv.ServeStream(context.Background(), os.Stdin, os.Stdout)
		srv.Close()
		os.Exit(0)
	}
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}

const (
	tPipe  = "pipe"
	tStdio = "stdio"
	tHTTP  = "http"
	tWS    = "websocket"
)

var allTransports = []string{tPipe, tStdio, tHTTP, tWS}

// fixture is a connected client and its server (srv is nil on stdio).
type fixture struct {
	c   *client.Client
	srv *testserver.Server
	ts  *httptest.Server
}

// connect serves so on transport tr and connects a client with opts.
func connect(t *testing.T, tr string, so testserver.Options, opts ...client.Option) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	f := &fixture{}
	var err error
	switch tr {
	case tPipe:
		f.srv = testserver.New(so)
		pipe, end := transport.NewPipe()
		served := make(chan struct{})
		go func() {
			defer close(served)
			_ = f.srv.ServeStream(context.Background(), end, end)
		}()
		t.Cleanup(func() {
			end.Close()
			f.srv.Close()
			<-served
		})
		f.c, err = client.Connect(ctx, pipe, opts...)
	case tStdio:
		spec, merr := json.Marshal(so)
		if merr != nil {
			t.Fatal(merr)
		}
		cmd := transport.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{stdioEnv + "=" + string(spec)}
		f.c, err = client.Connect(ctx, cmd, opts...)
	case tHTTP, tWS:
		f.srv = testserver.New(so)
		if tr == tHTTP {
			f.ts = httptest.NewServer(f.srv.Handler())
		} else {
			f.ts = httptest.NewServer(f.srv.WebSocketHandler())
		}
		srv, ts := f.srv, f.ts
		t.Cleanup(func() {
			srv.Close()
			ts.Close()
		})
		url := ts.URL
		if tr == tWS {
			url = "ws" + strings.TrimPrefix(url, "http")
		}
		f.c, err = client.Dial(ctx, url, opts...)
	}
	if err != nil {
		t.Fatalf("connecting over %s: %v", tr, err)
	}
	c := f.c
	t.Cleanup(func() { c.Close() })
	return f
}

// emit raises an event on the server through its test control.
func (f *fixture) emit(t *testing.T, name string) string {
	t.Helper()
	var res struct {
		EventID string `json:"eventId"`
	}
	if err := f.c.Call(testCtx(t), testserver.MethodEmitEvent, map[string]any{"name": name, "data": map[string]any{"n": 1}}, &res); err != nil {
		t.Fatalf("emitting %s: %v", name, err)
	}
	return res.EventID
}

// requests returns the params of the requests of method the server got.
func (f *fixture) requests(method string) []map[string]json.RawMessage {
	var out []map[string]json.RawMessage
	for _, r := range f.srv.Received() {
		if r.Method != method {
			continue
		}
		var p map[string]json.RawMessage
		_ = json.Unmarshal(r.Params, &p)
		out = append(out, p)
	}
	return out
}

const waitBound = 10 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

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
