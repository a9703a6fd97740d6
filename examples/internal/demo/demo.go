package demo

import (
	"context"
	"net/http/httptest"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// Connect connects to the MCP server at url with opts. When url is "" it
// runs a test server in-process and connects to it over a pipe instead.
// The returned function stops that server; call it after closing the
// client (it does nothing when url was given).
func Connect(ctx context.Context, url string, opts ...client.Option) (*client.Client, func(), error) {
	if url != "" {
		c, err := client.Dial(ctx, url, opts...)
		return c, func() {}, err
	}
	srv := testserver.New(testserver.Options{})
	pipe, end := transport.NewPipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeStream(context.Background(), end, end)
	}()
	stop := func() {
		end.Close()
		<-done
		srv.Close()
	}
	c, err := client.Connect(ctx, pipe, opts...)
	return c, stop, err
}

// ServeHTTP serves a new test server over HTTP on 127.0.0.1. It returns
// the server, its URL and the function that stops both.
func ServeHTTP() (*testserver.Server, string, func()) {
	srv := testserver.New(testserver.Options{})
	ts := httptest.NewServer(srv.Handler()) // listens on 127.0.0.1
	return srv, ts.URL, func() {
		srv.Close()
		ts.Close()
	}
}
