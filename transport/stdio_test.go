package transport_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// testTimeout bounds every blocking step of a test, so that a bug shows up
// as a failure rather than a hung test binary.
const testTimeout = 30 * time.Second

// testServer returns a Stdio that runs this test binary as a server in
// the given mode (see runTestServer).
func testServer(t testing.TB, mode string) *transport.Stdio {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := transport.Command(exe)
	// A race-enabled binary sleeps a second before exiting unless told
	// not to; that would only slow the tests down.
	s.Env = []string{serverEnv + "=" + mode, "GORACE=atexit_sleep_ms=0"}
	return s
}

// connect connects t and closes the connection when the test ends.
func connect(t testing.TB, tr transport.Transport) transport.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	c, err := tr.Connect(ctx)
	if err != nil {
		t.Fatalf("Connect() error = %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func request(t testing.TB, id int64, method string, params any) *jsonrpc.Request {
	t.Helper()
	r, err := jsonrpc.NewRequest(jsonrpc.Int64ID(id), method, params)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// call writes a request and reads until its response, returning the
// response and the notifications read before it.
func call(t testing.TB, c transport.Conn, id int64, method string, params any) *jsonrpc.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := c.Write(ctx, request(t, id, method, params)); err != nil {
		t.Fatalf("Write(%s) error = %v", method, err)
	}
	for {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("Read() after %s error = %v", method, err)
		}
		if r, ok := m.(*jsonrpc.Response); ok {
			if got, _ := r.ID.Int64(); got != id {
				t.Fatalf("Read() = response to %v, want %d", r.ID, id)
			}
			return r
		}
	}
}

// readNotification reads one message and requires it to be the
// notification method.
func readNotification(t testing.TB, c transport.Conn, method string) *jsonrpc.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	m, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read() waiting for %s error = %v", method, err)
	}
	r, ok := m.(*jsonrpc.Request)
	if !ok || r.Method != method || !r.IsNotification() {
		t.Fatalf("Read() = %#v, want notification %s", m, method)
	}
	return r
}

// readErr reads until an error and returns it.
func readErr(t testing.TB, c transport.Conn) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	for {
		if _, err := c.Read(ctx); err != nil {
			return err
		}
	}
}

func TestCommand(t *testing.T) {
	got := transport.Command("npx", "-y", "some-server")
	want := &transport.Stdio{Path: "npx", Args: []string{"-y", "some-server"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Command() mismatch (-want +got):\n%s", diff)
	}
}

// TestStdioServerKey: the key is the quoted command line; Env and Dir
// make another key without spelling their values.
func TestStdioServerKey(t *testing.T) {
	plain := transport.Command("npx", "-y", "a b")
	if got, want := plain.ServerKey(), `cmd:"npx" "-y" "a b"`; got != want {
		t.Errorf("ServerKey() = %q, want %q", got, want)
	}
	if transport.Command("npx", "-y a", "b").ServerKey() == plain.ServerKey() {
		t.Error("arguments split differently share a key")
	}
	withEnv := transport.Command("npx", "-y", "a b")
	withEnv.Env = []string{"API_KEY=s3cret"}
	other := transport.Command("npx", "-y", "a b")
	other.Env = []string{"API_KEY=other"}
	inDir := transport.Command("npx", "-y", "a b")
	inDir.Dir = "/srv"
	keys := map[string]bool{}
	for _, s := range []*transport.Stdio{plain, withEnv, other, inDir} {
		k := s.ServerKey()
		if keys[k] {
			t.Errorf("key %q repeats", k)
		}
		keys[k] = true
		if strings.Contains(k, "s3cret") || !strings.HasPrefix(k, plain.ServerKey()) {
			t.Errorf("ServerKey() = %q, want the command line first and no Env value", k)
		}
	}
	again := transport.Command("npx", "-y", "a b")
	again.Env = []string{"API_KEY=s3cret"}
	if again.ServerKey() != withEnv.ServerKey() {
		t.Error("the same command and Env give different keys")
	}
}

func TestStdioRoundTrip(t *testing.T) {
	c := connect(t, testServer(t, "echo"))
	if k, ok := c.(transport.Kinder); !ok || k.Kind() != transport.KindStdio {
		t.Errorf("Kind() = %v, want %q", c, transport.KindStdio)
	}
	tests := []struct {
		name   string
		params any
		want   string
	}{
		{"object", map[string]any{"a": 1, "b": "two"}, `{"a":1,"b":"two"}`},
		{"no params", nil, `{}`},
		{"unicode and newline in string", map[string]any{"s": "line1\nline2 ✓"}, `{"s":"line1\nline2 ✓"}`},
		{"raw with whitespace", json.RawMessage("{\n  \"x\": [1, 2]\n}"), `{"x":[1,2]}`},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(t, c, int64(i+1), "echo", tt.params)
			if r.Error != nil {
				t.Fatalf("echo error = %v", r.Error)
			}
			if diff := cmp.Diff(tt.want, string(r.Result)); diff != "" {
				t.Errorf("echo result mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioConcurrentWrites sends from many goroutines at once: a message
// interleaved with another would not parse on the server, which then exits
// with code 4 and the responses never come.
func TestStdioConcurrentWrites(t *testing.T) {
	c := connect(t, testServer(t, "echo"))
	const n = 50
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	pad := strings.Repeat("p", 10000)
	// Writes run while this goroutine reads: the server answers as it
	// goes, and would block on a full stdout pipe otherwise.
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			errs <- c.Write(ctx, request(t, int64(i), "echo", map[string]any{"i": i, "pad": pad}))
		})
	}
	defer func() {
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("Write() error = %v", err)
			}
		}
	}()
	seen := map[int64]bool{}
	for range n {
		m, err := c.Read(ctx)
		if err != nil {
			t.Fatalf("Read() error = %v", err)
		}
		r := m.(*jsonrpc.Response)
		id, _ := r.ID.Int64()
		var res struct {
			I   int64  `json:"i"`
			Pad string `json:"pad"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil || res.I != id || res.Pad != pad {
			t.Fatalf("response %d = %.60s…, want its own params", id, r.Result)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("got %d distinct responses, want %d", len(seen), n)
	}
}

func TestStdioExitMidRequest(t *testing.T) {
	tests := []struct {
		name        string
		stderrTail  int
		stderrBytes int
		wantTailMax int
	}{
		{"default tail", 0, 100, transport.DefaultStderrTail},
		{"long stderr is cut to the tail", 0, 50000, transport.DefaultStderrTail},
		{"small tail", 64, 1000, 64},
		// Keep everything: the ring's compaction bound used to wrap
		// and panic the stderr goroutine.
		{"tail as large as an int", math.MaxInt, 50000, math.MaxInt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, "echo")
			s.StderrTail = tt.stderrTail
			c := connect(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if err := c.Write(ctx, request(t, 1, "crash", map[string]any{"stderrBytes": tt.stderrBytes})); err != nil {
				t.Fatal(err)
			}
			// The notification written before the exit is delivered
			// before the exit.
			readNotification(t, c, "bye")
			err := readErr(t, c)
			ee, ok := errors.AsType[*transport.ExitError](err)
			if !ok {
				t.Fatalf("Read() error = %v (%T), want *ExitError", err, err)
			}
			if ee.Code != 3 || ee.Signal != 0 {
				t.Errorf("ExitError code, signal = %d, %v; want 3, 0", ee.Code, ee.Signal)
			}
			if !strings.HasSuffix(ee.Stderr, "boom: the server crashed on purpose") {
				t.Errorf("ExitError.Stderr = %q, want it to end with the boom line", ee.Stderr)
			}
			if len(ee.Stderr) > tt.wantTailMax {
				t.Errorf("len(ExitError.Stderr) = %d, want at most %d", len(ee.Stderr), tt.wantTailMax)
			}
			if !errors.Is(err, transport.ErrClosed) {
				t.Errorf("errors.Is(%v, ErrClosed) = false, want true", err)
			}
			// Every later Read reports the same.
			if _, err2 := c.Read(ctx); err2 != err {
				t.Errorf("second Read() error = %v, want %v", err2, err)
			}
			if err := c.Write(ctx, request(t, 2, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
				t.Errorf("Write() after exit error = %v, want ErrClosed", err)
			}
			if err := c.Close(); err == nil {
				t.Errorf("Close() = nil, want the exit error of code 3")
			} else if ee, ok := errors.AsType[*transport.ExitError](err); !ok || ee.Code != 3 {
				t.Errorf("Close() = %v, want *ExitError with code 3", err)
			}
		})
	}
}

func TestStdioStderrCopy(t *testing.T) {
	var buf lockedBuffer
	s := testServer(t, "echo")
	s.Stderr = &buf
	c := connect(t, s)
	if err := c.Write(context.Background(), request(t, 1, "crash", nil)); err != nil {
		t.Fatal(err)
	}
	readErr(t, c) // the process exited and stderr was drained
	if got := buf.String(); !strings.Contains(got, "boom: the server crashed on purpose") {
		t.Errorf("Stderr copy = %q, want the boom line", got)
	}
}

func TestStdioReadHonoursContext(t *testing.T) {
	c := connect(t, testServer(t, "echo"))
	if err := c.Write(context.Background(), request(t, 1, "ignore", nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if m, err := c.Read(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Read() on a silent server = %v, %v; want DeadlineExceeded", m, err)
	}
	// A Read given up on leaves the connection usable.
	if r := call(t, c, 2, "echo", map[string]int{"n": 2}); string(r.Result) != `{"n":2}` {
		t.Errorf("echo after a cancelled Read = %s, want {\"n\":2}", r.Result)
	}
}

func TestStdioSkipsNonJSONLines(t *testing.T) {
	var logs lockedBuffer
	s := testServer(t, "banner")
	s.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	c := connect(t, s)
	if r := call(t, c, 1, "echo", map[string]int{"n": 1}); string(r.Result) != `{"n":1}` {
		t.Errorf("echo after banner = %s, want {\"n\":1}", r.Result)
	}
	got := logs.String()
	for _, want := range []string{"not JSON", "Starting test server", "not a JSON-RPC message"} {
		if !strings.Contains(got, want) {
			t.Errorf("log = %q, want it to mention %q", got, want)
		}
	}
	if n := strings.Count(got, "level=WARN"); n != 2 {
		t.Errorf("log has %d warnings, want 2 (blank lines are skipped silently):\n%s", n, got)
	}
}

func TestStdioMessageSizeLimit(t *testing.T) {
	const limit = 100 << 10 // more than the reader's buffer, to cover assembly
	tests := []struct {
		name     string
		size     int
		wantSize bool
	}{
		{"well under", 1000, true},
		{"exactly the limit", limit, true},
		{"one byte over", limit + 1, false},
		{"far over", 4 * limit, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, "echo")
			s.MaxMessageSize = limit
			c := connect(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			if err := c.Write(ctx, request(t, 1, "sized", map[string]int{"size": tt.size})); err != nil {
				t.Fatal(err)
			}
			m, err := c.Read(ctx)
			if tt.wantSize {
				r, ok := m.(*jsonrpc.Response)
				if err != nil || !ok {
					t.Fatalf("Read() = %v, %v; want the response", m, err)
				}
				line, _ := jsonrpc.EncodeMessage(r)
				if len(line) != tt.size {
					t.Errorf("response length = %d, want %d", len(line), tt.size)
				}
				return
			}
			var tooLarge *transport.MessageTooLargeError
			if !errors.As(err, &tooLarge) || tooLarge.Limit != limit {
				t.Fatalf("Read() = %v, %v; want *MessageTooLargeError{Limit: %d}", m, err, limit)
			}
			// The connection is over.
			if _, err := c.Read(ctx); !errors.As(err, &tooLarge) {
				t.Errorf("second Read() = %v, want the same *MessageTooLargeError", err)
			}
		})
	}
}

// TestStdioEndlessLineBoundedMemory reads from a server that writes one
// 64 MiB line: the connection must fail after about the limit, without
// buffering the rest.
func TestStdioEndlessLineBoundedMemory(t *testing.T) {
	const limit = 256 << 10
	s := testServer(t, "flood")
	s.MaxMessageSize = limit
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	c := connect(t, s)
	err := readErr(t, c)
	runtime.ReadMemStats(&after)
	if _, ok := errors.AsType[*transport.MessageTooLargeError](err); !ok {
		t.Fatalf("Read() error = %v, want *MessageTooLargeError", err)
	}
	// Generous: the limit is 256 KiB and the line 64 MiB.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("reading the endless line allocated %d bytes, want at most 8 MiB", alloc)
	}
}

func TestStdioEnvAllowList(t *testing.T) {
	t.Setenv("CONDUIT_TEST_SECRET", "hunter2")
	tests := []struct {
		name    string
		inherit bool
		env     []string
		want    map[string]bool // variable -> set
	}{
		{"default", false, nil, map[string]bool{"CONDUIT_TEST_SECRET": false, "PATH": true, "CONDUIT_TEST_EXTRA": false}},
		{"inherit", true, nil, map[string]bool{"CONDUIT_TEST_SECRET": true, "PATH": true}},
		{"explicit", false, []string{"CONDUIT_TEST_EXTRA=yes"}, map[string]bool{"CONDUIT_TEST_SECRET": false, "CONDUIT_TEST_EXTRA": true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testServer(t, "echo")
			s.InheritEnv = tt.inherit
			s.Env = append(s.Env, tt.env...)
			c := connect(t, s)
			got := map[string]bool{}
			for i, name := range slices.Sorted(maps.Keys(tt.want)) {
				r := call(t, c, int64(i), "getenv", map[string]string{"name": name})
				var res struct{ Set bool }
				if err := json.Unmarshal(r.Result, &res); err != nil {
					t.Fatal(err)
				}
				got[name] = res.Set
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("variables set in the server (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStdioWriteHonoursContext writes more than a pipe holds to a server
// that never reads: the Write must give up when its context ends.
func TestStdioWriteHonoursContext(t *testing.T) {
	s := testServer(t, "no-read")
	s.TerminateDelay = -1 // it never reads, so never sees stdin close
	c := connect(t, s)
	big := request(t, 1, "echo", map[string]string{"pad": strings.Repeat("x", 1<<20)})
	// Make sure part of the line is written before the deadline: a
	// first small message shows the pipe is up (the write succeeds
	// without the server reading).
	if err := c.Write(t.Context(), request(t, 0, "echo", nil)); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := c.Write(ctx, big); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Write() to a server that does not read = %v, want DeadlineExceeded", err)
	}
	// Whether part of the line went out depends on timing; the
	// poisoning that follows a partial write is pinned by
	// TestPipeWriteCancelPartial.
}

// TestStdioCRLF: a server that ends its lines with "\r\n" (as a Windows
// program writing in text mode does) is understood on every platform; the
// "\r" is not part of the message, so a message of exactly
// MaxMessageSize bytes is accepted, short or longer than the read buffer.
func TestStdioCRLF(t *testing.T) {
	for _, size := range []int{4 << 10, 200 << 10} {
		s := testServer(t, "crlf")
		s.MaxMessageSize = size
		c := connect(t, s)
		r := call(t, c, 1, "echo", map[string]string{"x": "y"})
		if string(r.Result) != `{"x":"y"}` {
			t.Errorf("echo result = %s", r.Result)
		}
		call(t, c, 2, "sized", map[string]int{"size": size})
		if err := c.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	}
}

// TestStdioServerClosesStdout: a server that closes stdout but keeps
// running can send nothing more; Read reports the connection closed
// (after a grace period for the exit that usually follows).
// TestStdioByteOrderMark: a server whose output starts with a UTF-8 byte
// order mark is answered as any other; its first answer (in a session,
// the one to initialize) used to be skipped as a line that is not JSON.
func TestStdioByteOrderMark(t *testing.T) {
	c := connect(t, testServer(t, "bom"))
	for i := range 2 {
		r := call(t, c, int64(i), "echo", []byte(`{"n":1}`))
		if string(r.Result) != `{"n":1}` {
			t.Errorf("echo result = %s, want {\"n\":1}", r.Result)
		}
	}
}

func TestStdioServerClosesStdout(t *testing.T) {
	skipUnderWine(t, "a child started with CREATE_NO_WINDOW shares its standard handles with the console host Wine starts for it, so its closing stdout is not seen while it runs")
	c := connect(t, testServer(t, "close-stdout"))
	err := readErr(t, c)
	if _, isExit := errors.AsType[*transport.ExitError](err); isExit || !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read() = %v, want ErrClosed without an exit", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v, want nil (the server exits when stdin closes)", err)
	}
}

func TestStdioRestartIsConnect(t *testing.T) {
	s := testServer(t, "echo")
	pid := func(c transport.Conn) int {
		var res struct{ Pid int }
		if err := json.Unmarshal(call(t, c, 1, "pid", nil).Result, &res); err != nil {
			t.Fatal(err)
		}
		return res.Pid
	}
	c1 := connect(t, s)
	p1 := pid(c1)
	if err := c1.Close(); err != nil {
		t.Fatalf("Close() = %v, want nil for a server that exits on stdin close", err)
	}
	c2 := connect(t, s)
	if p2 := pid(c2); p2 == p1 {
		t.Errorf("second Connect reached pid %d again, want a new process", p2)
	}
}

func TestStdioConnectErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name  string
		s     *transport.Stdio
		ctx   context.Context
		check func(error) bool
	}{
		{"empty path", &transport.Stdio{}, context.Background(), func(err error) bool { return err != nil }},
		{"not found", transport.Command("conduit-no-such-program-xyz"), context.Background(), func(err error) bool { return errors.Is(err, exec.ErrNotFound) }},
		{"cancelled", transport.Command("true"), cancelled, func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.s.Connect(tt.ctx)
			if c != nil {
				c.Close()
			}
			if !tt.check(err) {
				t.Errorf("Connect() error = %v", err)
			}
		})
	}
}

func TestStdioCloseIdempotentAndConcurrent(t *testing.T) {
	c := connect(t, testServer(t, "echo"))
	call(t, c, 1, "echo", nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = c.Close() })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Close() #%d = %v, want nil", i, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close() again = %v, want nil", err)
	}
	ctx := context.Background()
	if _, err := c.Read(ctx); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Read() after Close = %v, want ErrClosed", err)
	}
	if err := c.Write(ctx, request(t, 2, "echo", nil)); !errors.Is(err, transport.ErrClosed) {
		t.Errorf("Write() after Close = %v, want ErrClosed", err)
	}
}

// TestStdioCloseWhileReading closes while another goroutine is blocked in
// Read: the Read must return ErrClosed.
func TestStdioCloseWhileReading(t *testing.T) {
	c := connect(t, testServer(t, "echo"))
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(context.Background())
		done <- err
	}()
	if err := c.Close(); err != nil {
		t.Errorf("Close() = %v", err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, transport.ErrClosed) {
			t.Errorf("blocked Read() = %v, want ErrClosed", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("Read() still blocked after Close")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func BenchmarkStdioRoundTrip(b *testing.B) {
	c := connect(b, testServer(b, "echo"))
	ctx := context.Background()
	req := request(b, 1, "echo", map[string]any{"name": "add", "arguments": map[string]int{"a": 1, "b": 2}})
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Read(ctx); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Close(); err != nil {
		b.Fatal(fmt.Errorf("Close: %w", err))
	}
}

// BenchmarkStdioLargeMessage reads a 1 MiB response from the re-exec'd
// server: the cost of assembling a line far over the reader's buffer and
// decoding it. B/op counts this process only (the server is another).
func BenchmarkStdioLargeMessage(b *testing.B) {
	const size = 1 << 20
	c := connect(b, testServer(b, "echo"))
	ctx := context.Background()
	req := request(b, 1, "sized", map[string]int{"size": size})
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Response); !ok || len(r.Result) < size-64 {
			b.Fatalf("Read() = %T, want a response with a 1 MiB result", m)
		}
	}
	if err := c.Close(); err != nil {
		b.Fatal(fmt.Errorf("Close: %w", err))
	}
}

// TestLineMaxMessageSizeHuge: a MaxMessageSize as large as an int holds
// (no limit worth the name) frames as any other: short lines and lines
// longer than the reader's buffer are delivered. It used to overflow the
// size of the read buffer (a panic on the reader goroutine) and the
// limit checks (every long line too large).
func TestLineMaxMessageSizeHuge(t *testing.T) {
	tests := []struct {
		name string
		tr   func(t *testing.T) transport.Transport
	}{
		{"stdio", func(t *testing.T) transport.Transport {
			s := testServer(t, "echo")
			s.MaxMessageSize = math.MaxInt
			return s
		}},
		{"pipe", func(t *testing.T) transport.Transport {
			p, server := transport.NewPipe()
			p.MaxMessageSize = math.MaxInt
			wait := serveEcho(server)
			t.Cleanup(wait)
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := connect(t, tt.tr(t))
			for i, params := range []string{`{"a":1}`, `{"p":"` + strings.Repeat("x", 100<<10) + `"}`} {
				r := call(t, c, int64(i), "echo", []byte(params))
				if string(r.Result) != params {
					t.Errorf("echo of %d bytes = %d bytes, want them back", len(params), len(r.Result))
				}
			}
			c.Close()
		})
	}
}
