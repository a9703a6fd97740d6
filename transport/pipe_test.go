package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
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
	return serveLines(rw, func(req *jsonrpc.Request) []string {
		if req.IsNotification() {
			return nil
		}
		resp, _ := jsonrpc.NewResponse(req.ID, req.Params)
		if len(req.Params) == 0 {
			resp, _ = jsonrpc.NewResponse(req.ID, nil)
		}
		b, _ := jsonrpc.EncodeMessage(resp)
		return []string{string(b)}
	})
}

// serveLines runs a line-delimited server on rw until rw ends or a line
// is not JSON-RPC, writing the lines answer returns for each request,
// and closes rw then. The returned function waits for it to stop.
func serveLines(rw io.ReadWriteCloser, answer func(*jsonrpc.Request) []string) (wait func()) {
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
			if !ok {
				continue
			}
			for _, l := range answer(req) {
				if _, err := rw.Write([]byte(l + "\n")); err != nil {
					return
				}
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
// than the reader's buffer, and with the default limit (16 MiB).
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
		{"long line at the limit", 200 << 10, sized(200<<10) + "\n" + note("b") + "\n", []string{"m", "b"}, false},
		{"long line at the limit with crlf", 200 << 10, sized(200<<10) + "\r\n" + note("b") + "\n", []string{"m", "b"}, false},
		{"long line one byte over the limit", 200 << 10, sized(200<<10+1) + "\n" + note("b") + "\n", nil, true},
		{"long line one byte over the limit with crlf", 200 << 10, sized(200<<10+1) + "\r\n", nil, true},
		{"long line at the limit without newline", 200 << 10, sized(200 << 10), []string{"m"}, false},
		{"long line one byte over without newline", 200 << 10, sized(200<<10 + 1), nil, true},
		{"long line at a piece boundary", 1 << 20, sized(128<<10) + "\n" + sized(128<<10-1) + "\r\n" + note("b") + "\n", []string{"m", "m", "b"}, false},
		{"endless line", 1 << 10, sized(64 << 10), nil, true},
		// Some Windows programs start their output with a UTF-8 byte
		// order mark; the first line, often the answer to initialize,
		// used to be skipped as not JSON.
		{"byte order mark before the first line", 0, "\xEF\xBB\xBF" + note("a") + "\n" + note("b") + "\n", []string{"a", "b"}, false},
		{"byte order mark before a line at the limit", 100, "\xEF\xBB\xBF" + sized(100) + "\n", []string{"m"}, false},
		{"byte order mark before a long first line", 1 << 20, "\xEF\xBB\xBF" + sized(300<<10) + "\n" + note("b") + "\n", []string{"m", "b"}, false},
		{"byte order mark on a later line", 0, note("a") + "\n\xEF\xBB\xBF" + note("b") + "\n" + note("c") + "\n", []string{"a", "c"}, false},
		// 0 or negative: the documented 16 MiB.
		{"default limit at 16 MiB", 0, sized(16<<20) + "\n" + note("b") + "\n", []string{"m", "b"}, false},
		{"default limit one byte over", 0, sized(16<<20+1) + "\n", nil, true},
		{"negative limit one byte over 16 MiB", -1, sized(16<<20+1) + "\n", nil, true},
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
			limit := tt.limit
			if limit <= 0 {
				limit = 16 << 20
			}
			switch {
			case tt.wantTooBig && (!isTooBig || tooBig.Limit != limit):
				t.Errorf("Read() error = %v, want *MessageTooLargeError{Limit: %d}", err, limit)
			case !tt.wantTooBig && !errors.Is(err, transport.ErrClosed):
				t.Errorf("Read() error = %v, want ErrClosed", err)
			}
			// The connection ends without the server reading; Close
			// must not wait for the writer goroutine either.
			c.Close()
		})
	}
}

// sizesAroundChunks are message sizes around the 64 KiB pieces in which
// long messages are gathered, and far over them.
func sizesAroundChunks() []int {
	const chunk = 64 << 10
	return []int{100, chunk - 1, chunk, chunk + 1, 200, 2*chunk - 1, 2 * chunk, 2*chunk + 1, 300 << 10, 1 << 20, 150}
}

// sizedNote returns notification "n<i>" of exactly size bytes, its params
// padded with the letter i selects, so that messages differ throughout.
func sizedNote(i, size int) []byte {
	head := `{"jsonrpc":"2.0","method":"n` + strconv.Itoa(i) + `","params":{"p":"`
	const tail = `"}}`
	return []byte(head + strings.Repeat(string(rune('a'+i%26)), size-len(head)-len(tail)) + tail)
}

// checkSizedNotes reads the notifications sizedNote(i, sizes[i]) from c,
// every one before looking at any (the reader runs ahead), then checks
// that each still holds its own bytes.
func checkSizedNotes(t *testing.T, c transport.Conn, sizes []int) {
	t.Helper()
	var got []jsonrpc.Message
	for range sizes {
		m, err := c.Read(t.Context())
		if err != nil {
			t.Fatalf("Read() after %d messages: %v", len(got), err)
		}
		got = append(got, m)
	}
	for i, m := range got {
		b, err := jsonrpc.EncodeMessage(m)
		if err != nil {
			t.Fatal(err)
		}
		if want := sizedNote(i, sizes[i]); !bytes.Equal(b, want) {
			t.Errorf("message %d (%d bytes) = %.80s… (%d bytes), want %.80s…", i, sizes[i], b, len(b), want)
		}
	}
}

// TestPipeMessagesKeepTheirBytes: lines of sizes around the reader's
// buffer and the pieces long lines are gathered in, read ahead of each
// other, each keep their own bytes.
func TestPipeMessagesKeepTheirBytes(t *testing.T) {
	sizes := sizesAroundChunks()
	for _, crlf := range []bool{false, true} {
		t.Run(fmt.Sprintf("crlf=%v", crlf), func(t *testing.T) {
			p, server := transport.NewPipe()
			p.MaxMessageSize = 2 << 20
			var wg sync.WaitGroup
			wg.Go(func() {
				defer server.Close()
				for i, n := range sizes {
					line := append(sizedNote(i, n), '\n')
					if crlf {
						line = append(line[:len(line)-1], '\r', '\n')
					}
					if _, err := server.Write(line); err != nil {
						return
					}
				}
			})
			defer wg.Wait()
			c := connect(t, p)
			checkSizedNotes(t, c, sizes)
			c.Close()
		})
	}
}

// TestPipeLargeMessageAllocations: reading a 1 MiB line costs about one
// buffer of its size, not a series of growing copies plus a copy of the
// result.
func TestPipeLargeMessageAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	const size, count = 1 << 20, 16
	p, server := transport.NewPipe()
	line := append(sizedNote(0, size), '\n')
	start := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		defer server.Close()
		<-start
		for range count {
			if _, err := server.Write(line); err != nil {
				return
			}
		}
	})
	defer wg.Wait()
	c := connect(t, p)
	defer c.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	close(start)
	for range count {
		m, err := c.Read(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Request); !ok || len(r.Params) < size-64 {
			t.Fatalf("Read() = %T, want the 1 MiB notification", m)
		}
	}
	runtime.ReadMemStats(&after)
	// One exact buffer per message (1 MiB); the former reader allocated
	// about 5.5 MiB. Generous for the pieces and the pipe.
	if perMessage := (after.TotalAlloc - before.TotalAlloc) / count; perMessage > size*3/2 {
		t.Errorf("reading a %d-byte line allocated %d bytes, want at most %d", size, perMessage, size*3/2)
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
	checkCloseIdempotent(t, c)
}

// checkCloseIdempotent closes c from 8 goroutines at once while a Read is
// blocked on it: every Close returns nil, the Read returns ErrClosed, and a
// later Write fails with ErrClosed.
func checkCloseIdempotent(t *testing.T, c transport.Conn) {
	t.Helper()
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
	if err := c.Write(t.Context(), request(t, 1000, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
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

// BenchmarkPipeLargeMessage reads a 1 MiB response through a pipe whose
// server writes a prepared line, so that the allocations and time measured
// are the client's framing and decoding.
func BenchmarkPipeLargeMessage(b *testing.B) {
	const size = 1 << 20
	p, server := transport.NewPipe()
	resp := []byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", size) + `"}]}}` + "\n")
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
	req := request(b, 1, "tools/call", map[string]any{"name": "big"})
	b.SetBytes(int64(len(resp)))
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Response); !ok || len(r.Result) < size {
			b.Fatalf("Read() = %T, want a response with a 1 MiB result", m)
		}
	}
	c.Close()
	<-done
}
