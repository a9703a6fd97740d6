package client_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// unixListener listens on a Unix socket in a temporary directory.
func unixListener(t *testing.T) (net.Listener, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Skipf("no Unix sockets here: %v", err)
	}
	return ln, path
}

// TestUnixSocketHTTP: Dial("http+unix://…") speaks Streamable HTTP over
// a Unix socket, in both eras (issue 29, item 5).
func TestUnixSocketHTTP(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			ln, path := unixListener(t)
			srv := testserver.New(testserver.Options{})
			hs := &http.Server{Handler: srv.Handler()}
			served := make(chan struct{})
			go func() {
				defer close(served)
				_ = hs.Serve(ln)
			}()
			t.Cleanup(func() {
				srv.Close()
				hs.Close()
				<-served
			})
			c, err := client.Dial(testCtx(t), "http+unix://"+url.PathEscape(path)+"/mcp", client.WithProtocol(era.p))
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "over a socket"}); err != nil {
				t.Errorf("CallTool: %v", err)
			}
			if got := c.Negotiated().Transport; got != transport.KindHTTP {
				t.Errorf("Transport = %q, want http", got)
			}
		})
	}
	_, err := client.Dial(testCtx(t), "http+unix:///mcp")
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
		t.Errorf("Dial without a socket = %v, want KindInvalid", err)
	}
}

// streamServer accepts connections on ln and serves each with srv until
// the test ends; conns returns those accepted so far.
func streamServer(t *testing.T, ln net.Listener, srv *testserver.Server) (conns func() []net.Conn) {
	var mu sync.Mutex
	var all []net.Conn
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			all = append(all, conn)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_ = srv.ServeStream(context.Background(), conn, conn)
				conn.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range all {
			c.Close()
		}
		mu.Unlock()
		srv.Close()
		wg.Wait()
	})
	return func() []net.Conn {
		mu.Lock()
		defer mu.Unlock()
		return append([]net.Conn(nil), all...)
	}
}

// TestStreamTransport: transport.DialStream carries newline-delimited
// JSON over a Unix socket in both eras, and a lost connection is made
// again (Dial is called anew) so that the next call works.
func TestStreamTransport(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			ln, path := unixListener(t)
			conns := streamServer(t, ln, testserver.New(testserver.Options{}))
			c, err := client.Connect(testCtx(t), transport.DialStream("unix", path), client.WithProtocol(era.p))
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			defer c.Close()
			if got := c.Negotiated().Transport; got != transport.KindStream {
				t.Errorf("Transport = %q, want stream", got)
			}
			if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "one"}); err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			conns()[0].Close() // the server drops the connection
			if !eventually(func() bool {
				_, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "two"})
				return err == nil
			}) {
				t.Fatal("no call worked after the connection was lost")
			}
			if n := len(conns()); n < 2 {
				t.Errorf("%d connections accepted, want a reconnect", n)
			}
		})
	}
}

// TestNewStreamOverCallerStream: NewStream runs a session over a byte
// stream the caller already has (here an in-process pipe pair).
func TestNewStreamOverCallerStream(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	srv := testserver.New(testserver.Options{})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.ServeStream(context.Background(), sr, sw)
	}()
	t.Cleanup(func() {
		sw.Close()
		sr.Close()
		srv.Close()
		<-served
	})
	rwc := struct {
		io.Reader
		io.Writer
		io.Closer
	}{cr, cw, closers{cr, cw}}
	c, err := client.Connect(testCtx(t), transport.NewStream(rwc), client.WithProtocol(client.Modern))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer c.Close()
	if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "hi"}); err != nil {
		t.Errorf("CallTool: %v", err)
	}
}

// closers closes both pipe ends.
type closers struct {
	r *io.PipeReader
	w *io.PipeWriter
}

func (c closers) Close() error {
	c.r.Close()
	return c.w.Close()
}
