package client_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// benchClient connects a client to the test server over tr ("pipe" or
// "http") and returns it with a function that stops everything.
func benchClient(b *testing.B, tr string, opts ...client.Option) (*client.Client, func()) {
	b.Helper()
	var t transport.Transport
	var stop func()
	if tr == "pipe" {
		t, stop = exampleServer(testserver.Options{})
	} else {
		srv := testserver.New(testserver.Options{})
		ts := httptest.NewServer(srv.Handler())
		t = &transport.StreamableHTTP{URL: ts.URL}
		stop = func() {
			srv.Close()
			ts.Close()
		}
	}
	c, err := client.Connect(context.Background(), t, opts...)
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return c, func() {
		c.Close()
		stop()
	}
}

// benchTransports runs fn as one sub-benchmark per transport (pipe, http),
// with a client connected over it.
func benchTransports(b *testing.B, fn func(b *testing.B, c *client.Client)) {
	for _, tr := range []string{"pipe", "http"} {
		b.Run(tr, func(b *testing.B) {
			c, stop := benchClient(b, tr)
			defer stop()
			fn(b, c)
		})
	}
}

// benchAdd measures one tools/call of "add" and reading its text.
func benchAdd(b *testing.B, c *client.Client) {
	ctx := context.Background()
	args := map[string]any{"a": 1, "b": 2}
	if _, err := c.CallTool(ctx, "add", args); err != nil { // warm the tool registry
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		res, err := c.CallTool(ctx, "add", args)
		if err != nil {
			b.Fatal(err)
		}
		if res.Text() == "" {
			b.Fatal("empty result")
		}
	}
}

// BenchmarkCallTool measures one tools/call of "add" and reading its text.
func BenchmarkCallTool(b *testing.B) { benchTransports(b, benchAdd) }

// BenchmarkListTools measures walking the whole tools list.
func BenchmarkListTools(b *testing.B) {
	benchTransports(b, func(b *testing.B, c *client.Client) {
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			for _, err := range c.Tools(ctx) {
				if err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkCallToolMiddleware measures what a no-op middleware adds to a
// tools/call over the in-memory pipe.
func BenchmarkCallToolMiddleware(b *testing.B) {
	noop := func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) { return next(ctx, req) }
	}
	for _, bc := range []struct {
		name string
		opts []client.Option
	}{
		{"none", nil},
		{"noop", []client.Option{client.WithMiddleware(noop)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, stop := benchClient(b, "pipe", bc.opts...)
			defer stop()
			benchAdd(b, c)
		})
	}
}
