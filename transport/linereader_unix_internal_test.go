//go:build unix

package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// idleSourceOf returns src as an idle source when it is an *os.File the
// runtime polls, or nil.
func idleSourceOf(src io.Reader) idleSource {
	f, ok := src.(*os.File)
	if !ok {
		return nil
	}
	return new(polledFile).of(f)
}

// polledPipe returns a pipe whose read end is an idle source.
func polledPipe(t *testing.T) (r, w *os.File) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close(); w.Close() })
	if idleSourceOf(r) == nil {
		t.Fatal("a pipe's read end is not an idle source")
	}
	return r, w
}

// TestLineReaderPolledMatchesBufio: over a pipe the runtime polls, written
// in pieces, readSlice yields what bufio's ReadSlice does.
func TestLineReaderPolledMatchesBufio(t *testing.T) {
	for name, in := range lineInputs() {
		for _, size := range []int{16, 64, lineReaderSize} {
			t.Run(fmt.Sprintf("%s/%d", name, size), func(t *testing.T) {
				r, w := polledPipe(t)
				go func() {
					defer w.Close()
					for p := []byte(in); len(p) > 0; {
						k := min(len(p), 5)
						if _, err := w.Write(p[:k]); err != nil {
							return
						}
						p = p[k:]
						time.Sleep(100 * time.Microsecond)
					}
				}()
				got := readAllSlices(t, newLineReader(r, size, idleSourceOf(r)).readSlice)
				if want := bufioSlices(t, []byte(in), size); !sameSlices(got, want) {
					t.Fatalf("got %v\nwant %v", got, want)
				}
			})
		}
	}
}

// TestLineReaderIdleHoldsNoBuffer: on a polled pipe the buffer is held
// while what was read is being consumed, and given back before the wait
// for more: a wait that ends without data leaves the reader with none.
func TestLineReaderIdleHoldsNoBuffer(t *testing.T) {
	r, w := polledPipe(t)
	lr := newLineReader(r, lineReaderSize, idleSourceOf(r))
	if _, err := w.WriteString("one\ntwo\n"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"one\n", "two\n"} {
		line, err := lr.readSlice()
		if string(line) != want || err != nil {
			t.Fatalf("readSlice = %q, %v; want %q", line, err, want)
		}
		if lr.pooled == nil {
			t.Fatal("no buffer held while the line it returned is valid")
		}
	}
	// Nothing more comes before the deadline.
	r.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
	if _, err := lr.readSlice(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("err = %v, want os.ErrDeadlineExceeded", err)
	}
	if lr.pooled != nil || lr.buf != nil {
		t.Fatal("the reader held a buffer through a wait that read nothing")
	}
	// Errors are sticky, as the read loop expects; a new reader on the
	// same pipe goes on once the deadline is lifted.
	r.SetReadDeadline(time.Time{})
	lr = newLineReader(r, lineReaderSize, idleSourceOf(r))
	w.WriteString("three\n")
	if line, err := lr.readSlice(); string(line) != "three\n" || err != nil {
		t.Fatalf("readSlice = %q, %v", line, err)
	}
}

// TestLineReaderPolledClose: closing the file ends a wait with the error
// its Read gives (os.ErrClosed).
func TestLineReaderPolledClose(t *testing.T) {
	r, _ := polledPipe(t)
	lr := newLineReader(r, lineReaderSize, idleSourceOf(r))
	done := make(chan error, 1)
	go func() { _, err := lr.readSlice(); done <- err }()
	time.Sleep(10 * time.Millisecond)
	r.Close()
	select {
	case err := <-done:
		if !errors.Is(err, os.ErrClosed) {
			t.Fatalf("err = %v, want os.ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("readSlice still waiting 10 s after Close")
	}
}

// TestIdleSourceOf: only files the runtime polls are idle sources.
func TestIdleSourceOf(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "regular"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if idleSourceOf(f) != nil {
		t.Error("a regular file is an idle source")
	}
	if idleSourceOf(strings.NewReader("x")) != nil {
		t.Error("a strings.Reader is an idle source")
	}
}

// TestStdioIdleBuffers: a stdio connection's stdout reader and stderr
// copier wait for the server holding no buffer (a real server process,
// answering one echo first).
func TestStdioIdleBuffers(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := Command(exe)
	s.Env = []string{"CONDUIT_TRANSPORT_TEST_SERVER=echo", "GORACE=atexit_sleep_ms=0"}
	ctx := t.Context()
	conn, err := s.Connect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := conn.(*stdioConn)
	if sc.br.idle == nil {
		t.Fatal("stdout is not read as an idle source")
	}
	if err := conn.Write(ctx, &jsonrpc.Request{ID: jsonrpc.Int64ID(1), Method: "echo", Params: json.RawMessage(`{"x":1}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Read(ctx); err != nil {
		t.Fatal(err)
	}
	// Close joins the reader, which was waiting for the next line: the
	// wait ended without data, so what the reader holds now is what it
	// held through it.
	conn.Close()
	if sc.br.buf != nil || sc.br.pooled != nil {
		t.Error("the stdout reader held its buffer while waiting")
	}
}

// TestLineReaderPolledAllocs: reading a line through a polled pipe,
// giving the buffer back and taking it again, allocates nothing.
func TestLineReaderPolledAllocs(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	r, w := polledPipe(t)
	lr := newLineReader(r, lineReaderSize, idleSourceOf(r))
	line := []byte(`{"jsonrpc":"2.0","id":1,"result":{}}` + "\n")
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
		if got, err := lr.readSlice(); err != nil || len(got) != len(line) {
			t.Fatalf("readSlice = %q, %v", got, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%.1f allocations per line, want 0", allocs)
	}
}
