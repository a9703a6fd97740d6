package transport_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// serveEcho runs a line-delimited echo server on rw until rw ends, and
// closes rw then. The returned function waits for it to stop.
func serveEcho(rw io.ReadWriteCloser) (wait func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer rw.Close()
		br := bufio.NewReader(rw)
		for {
			line, err := br.ReadBytes('\n')
			if err != nil {
				return
			}
			m, err := jsonrpc.DecodeMessage(line)
			if err != nil {
				return
			}
			req, ok := m.(*jsonrpc.Request)
			if !ok || req.IsNotification() {
				continue
			}
			resp, _ := jsonrpc.NewResponse(req.ID, req.Params)
			if len(req.Params) == 0 {
				resp, _ = jsonrpc.NewResponse(req.ID, nil)
			}
			b, _ := jsonrpc.EncodeMessage(resp)
			if _, err := rw.Write(append(b, '\n')); err != nil {
				return
			}
		}
	}()
	return func() { <-done }
}

func TestPipeRoundTrip(t *testing.T) {
	p, server := transport.NewPipe()
	wait := serveEcho(server)
	defer wait()
	c := connect(t, p)
	if k, ok := c.(transport.Kinder); !ok || k.Kind() != transport.KindMemory {
		t.Errorf("Kind() = %v, want %q", c, transport.KindMemory)
	}
	for i, params := range []string{`{"a":1}`, `[1,2,3]`, `{"s":"ünïcödé"}`} {
		r := call(t, c, int64(i), "echo", []byte(params))
		if diff := cmp.Diff(params, string(r.Result)); diff != "" {
			t.Errorf("echo mismatch (-want +got):\n%s", diff)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
}

func TestPipeConnect(t *testing.T) {
	p, server := transport.NewPipe()
	defer server.Close()
	c, err := p.Connect(t.Context())
	if err != nil {
		t.Fatalf("first Connect() = %v", err)
	}
	defer c.Close()
	if c2, err := p.Connect(t.Context()); err == nil {
		c2.Close()
		t.Errorf("second Connect() = nil error, want one")
	}
	var zero transport.Pipe
	if c3, err := zero.Connect(t.Context()); err == nil {
		c3.Close()
		t.Errorf("zero Pipe Connect() = nil error, want one")
	}
}

// TestPipeFraming feeds raw server output through the line reader with a
// small limit, so that short inputs cover the limit edges and lines longer
// than the reader's buffer.
func TestPipeFraming(t *testing.T) {
	note := func(method string) string { return `{"jsonrpc":"2.0","method":"` + method + `"}` }
	// sized returns a notification line of exactly n bytes.
	sized := func(n int) string {
		base := `{"jsonrpc":"2.0","method":"m","params":{"p":""}}`
		return base[:len(base)-3] + strings.Repeat("x", n-len(base)) + base[len(base)-3:]
	}
	tests := []struct {
		name        string
		limit       int
		input       string
		wantMethods []string
		wantTooBig  bool
	}{
		{"lf", 0, note("a") + "\n" + note("b") + "\n", []string{"a", "b"}, false},
		{"crlf", 0, note("a") + "\r\n" + note("b") + "\r\n", []string{"a", "b"}, false},
		{"blank lines and noise", 0, "\n\r\n   \nhello world\n" + `{"x":1}` + "\n" + `[1]` + "\n" + note("a") + "\n", []string{"a"}, false},
		{"last line without newline", 0, note("a") + "\n" + note("b"), []string{"a", "b"}, false},
		{"at the limit", 100, sized(100) + "\n", []string{"m"}, false},
		{"at the limit with crlf", 100, sized(100) + "\r\n", []string{"m"}, false},
		{"over the limit", 100, note("a") + "\n" + sized(101) + "\n", []string{"a"}, true},
		{"over the limit without newline", 100, sized(101), nil, true},
		{"long line over the read buffer", 1 << 20, sized(300<<10) + "\n" + note("b") + "\n", []string{"m", "b"}, false},
		{"endless line", 1 << 10, sized(64 << 10), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, server := transport.NewPipe()
			p.MaxMessageSize = tt.limit
			var wg sync.WaitGroup
			wg.Go(func() {
				defer server.Close()
				io.WriteString(server, tt.input)
			})
			defer wg.Wait()
			c := connect(t, p)
			var got []string
			var err error
			for {
				var m jsonrpc.Message
				m, err = c.Read(t.Context())
				if err != nil {
					break
				}
				got = append(got, m.(*jsonrpc.Request).Method)
			}
			if diff := cmp.Diff(tt.wantMethods, got); diff != "" {
				t.Errorf("methods read (-want +got):\n%s", diff)
			}
			tooBig, isTooBig := errors.AsType[*transport.MessageTooLargeError](err)
			switch {
			case tt.wantTooBig && (!isTooBig || tooBig.Limit != tt.limit):
				t.Errorf("Read() error = %v, want *MessageTooLargeError{Limit: %d}", err, tt.limit)
			case !tt.wantTooBig && !errors.Is(err, transport.ErrClosed):
				t.Errorf("Read() error = %v, want ErrClosed", err)
			}
			// The connection ends without the server reading; Close
			// must not wait for the writer goroutine either.
			c.Close()
		})
	}
}

// TestPipeWriteCancel writes to a server that does not read: the Write
// must give up when its context ends, and since nothing was written the
// connection stays usable.
func TestPipeWriteCancel(t *testing.T) {
	p, server := transport.NewPipe()
	c := connect(t, p)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, request(t, 1, "echo", nil)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write() to a server that does not read = %v, want DeadlineExceeded", err)
	}
	wait := serveEcho(server)
	defer wait()
	if r := call(t, c, 2, "echo", []byte(`{"ok":true}`)); string(r.Result) != `{"ok":true}` {
		t.Errorf("echo after a cancelled Write = %s", r.Result)
	}
	c.Close()
}

// TestPipeWriteCancelPartial cancels a Write after the server read part of
// the line: the stream is corrupt, so every later Write fails.
func TestPipeWriteCancelPartial(t *testing.T) {
	p, server := transport.NewPipe()
	defer server.Close()
	c := connect(t, p)
	read := make(chan struct{})
	go func() {
		buf := make([]byte, 10)
		io.ReadFull(server, buf) // part of the line, then stop reading
		close(read)
	}()
	ctx, cancel := context.WithCancel(t.Context())
	go func() { <-read; cancel() }()
	if err := c.Write(ctx, request(t, 1, "echo", nil)); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write() = %v, want Canceled", err)
	}
	if err := c.Write(t.Context(), request(t, 2, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write() after a partial write = %v, want ErrClosed", err)
	}
}

func TestPipeServerCloses(t *testing.T) {
	p, server := transport.NewPipe()
	c := connect(t, p)
	server.Close()
	if err := readErr(t, c); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read() after the server closed = %v, want ErrClosed", err)
	}
	if err := c.Write(t.Context(), request(t, 1, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write() after the server closed = %v, want ErrClosed", err)
	}
}

func TestPipeCloseIdempotentAndConcurrent(t *testing.T) {
	p, server := transport.NewPipe()
	wait := serveEcho(server)
	defer wait()
	c := connect(t, p)
	blocked := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		blocked <- err
	}()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if err := c.Close(); err != nil {
				t.Errorf("Close() = %v", err)
			}
		})
	}
	wg.Wait()
	if err := <-blocked; !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read() blocked during Close = %v, want ErrClosed", err)
	}
	if err := c.Write(t.Context(), request(t, 1, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write() after Close = %v, want ErrClosed", err)
	}
}

func BenchmarkPipeRoundTrip(b *testing.B) {
	p, server := transport.NewPipe()
	// A server that answers every line with the same response, so that
	// the allocations measured are the client's.
	resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"3"}]}}` + "\n")
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReader(server)
		for {
			if _, err := br.ReadSlice('\n'); err != nil {
				return
			}
			if _, err := server.Write(resp); err != nil {
				return
			}
		}
	}()
	c := connect(b, p)
	ctx := context.Background()
	req := request(b, 1, "tools/call", map[string]any{"name": "add", "arguments": map[string]int{"a": 1, "b": 2}})
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	<-done
}
