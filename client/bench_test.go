package client_test

import (
	"context"
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
	ctx := context.Background()
	srv := testserver.New(testserver.Options{})
	var t transport.Transport
	var stop func()
	switch tr {
	case "pipe":
		pipe, end := transport.NewPipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = srv.ServeStream(context.Background(), end, end)
		}()
		t = pipe
		stop = func() {
			end.Close()
			srv.Close()
			<-done
		}
	default:
		ts := httptest.NewServer(srv.Handler())
		t = &transport.StreamableHTTP{URL: ts.URL}
		stop = func() {
			srv.Close()
			ts.Close()
		}
	}
	c, err := client.Connect(ctx, t, opts...)
	if err != nil {
		stop()
		b.Fatal(err)
	}
	return c, func() {
		c.Close()
		stop()
	}
}

// BenchmarkCallTool measures one tools/call of "add" and reading its text.
func BenchmarkCallTool(b *testing.B) {
	for _, tr := range []string{"pipe", "http"} {
		b.Run(tr, func(b *testing.B) {
			c, stop := benchClient(b, tr)
			defer stop()
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
		})
	}
}

// BenchmarkListTools measures walking the whole tools list.
func BenchmarkListTools(b *testing.B) {
	for _, tr := range []string{"pipe", "http"} {
		b.Run(tr, func(b *testing.B) {
			c, stop := benchClient(b, tr)
			defer stop()
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
}
