package skills_test

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
	"github.com/conduitmcp/conduit/skills"
	"github.com/conduitmcp/conduit/transport"
)

// stdioEnv makes the test binary serve the test server (skills on) on
// stdin/stdout; its value is the JSON of stdioOptions.
const stdioEnv = "CONDUIT_SKILLS_TEST_STDIO"

type stdioOptions struct {
	PageSize int
	Skills   bool
}

func TestMain(m *testing.M) {
	if spec := os.Getenv(stdioEnv); spec != "" {
		var o stdioOptions
		if json.Unmarshal([]byte(spec), &o) != nil {
			os.Exit(2)
		}
		srv := testserver.New(testserver.Options{PageSize: o.PageSize, Skills: o.Skills})
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
)

var (
	allTransports = []string{tPipe, tStdio, tHTTP}
	allEras       = []struct {
		name string
		p    client.Protocol
	}{{"modern", client.Modern}, {"legacy", client.Legacy}}
)

// fixture is a connected host and, except over stdio, its server.
type fixture struct {
	h   *skills.Host
	srv *testserver.Server // nil over stdio
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect serves so on tr and connects a client in era p.
func connect(t *testing.T, tr string, p client.Protocol, so testserver.Options) *fixture {
	t.Helper()
	ctx := testCtx(t)
	opts := []client.Option{client.WithProtocol(p)}
	f := &fixture{}
	var c *client.Client
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
		t.Cleanup(func() { end.Close(); f.srv.Close(); <-served })
		c, err = client.Connect(ctx, pipe, opts...)
	case tStdio:
		spec, _ := json.Marshal(stdioOptions{PageSize: so.PageSize, Skills: so.Skills})
		cmd := transport.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{stdioEnv + "=" + string(spec)}
		c, err = client.Connect(ctx, cmd, opts...)
	case tHTTP:
		f.srv = testserver.New(so)
		ts := httptest.NewServer(f.srv.Handler())
		t.Cleanup(func() { f.srv.Close(); ts.Close() })
		c, err = client.Dial(ctx, ts.URL, opts...)
	}
	if err != nil {
		t.Fatalf("connecting over %s: %v", tr, err)
	}
	t.Cleanup(func() { c.Close() })
	f.h = skills.NewHost(c)
	return f
}

// matrix runs fn in both eras over every transport, against a server
// with skills on and two skills a page.
func matrix(t *testing.T, fn func(t *testing.T, f *fixture)) {
	for _, era := range allEras {
		for _, tr := range allTransports {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				fn(t, connect(t, tr, era.p, testserver.Options{Skills: true, PageSize: 2}))
			})
		}
	}
}

// skillReads returns the skill files the server was asked for, in order
// (resources/read of skill:// URIs).
func skillReads(srv *testserver.Server) []string {
	var out []string
	for _, r := range srv.Received() {
		if r.Method != "resources/read" {
			continue
		}
		var p struct {
			URI string `json:"uri"`
		}
		_ = json.Unmarshal(r.Params, &p)
		if strings.HasPrefix(p.URI, "skill://") {
			out = append(out, p.URI)
		}
	}
	return out
}

// methods returns the JSON-RPC methods the server received, without the
// connection's own (initialize, discover, notifications).
func methods(srv *testserver.Server) []string {
	var out []string
	for _, m := range srv.ReceivedMethods() {
		if m == "initialize" || m == "server/discover" || strings.HasPrefix(m, "notifications/") || m == "GET" || m == "DELETE" {
			continue
		}
		out = append(out, m)
	}
	return out
}

func listAll(t *testing.T, h *skills.Host) map[string]*skills.Entry {
	t.Helper()
	out := map[string]*skills.Entry{}
	for e, err := range h.List(testCtx(t)) {
		if err != nil {
			t.Fatalf("List: %v", err)
		}
		if out[e.URI] != nil {
			t.Fatalf("List yielded %s twice", e.URI)
		}
		out[e.URI] = e
	}
	return out
}
