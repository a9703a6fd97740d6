package transport

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// sliceResult is one readSlice (or ReadSlice) result.
type sliceResult struct {
	line string
	err  error
}

// readAllSlices reads with next until the first error other than
// bufio.ErrBufferFull, and returns every result.
func readAllSlices(t testing.TB, next func() ([]byte, error)) []sliceResult {
	var out []sliceResult
	for i := 0; ; i++ {
		if i > 1<<16 {
			t.Fatal("no end of input after 65536 reads")
		}
		line, err := next()
		out = append(out, sliceResult{string(line), err})
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return out
		}
	}
}

// bufioSlices is what bufio.Reader.ReadSlice('\n') yields for data with a
// buffer of size bytes.
func bufioSlices(t testing.TB, data []byte, size int) []sliceResult {
	br := bufio.NewReaderSize(bytes.NewReader(data), size)
	return readAllSlices(t, func() ([]byte, error) { return br.ReadSlice('\n') })
}

// chunkReader yields data in pieces whose lengths cycle through sizes (a
// 0 is a read that returns nothing and no error).
type chunkReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	k := r.sizes[r.i%len(r.sizes)]
	r.i++
	k = min(k, len(p), len(r.data))
	n := copy(p, r.data[:k])
	r.data = r.data[n:]
	return n, nil
}

func lineInputs() map[string]string {
	return map[string]string{
		"empty":            "",
		"one line":         "{\"a\":1}\n",
		"no final newline": "one\ntwo",
		"crlf":             "one\r\ntwo\r\n",
		"blank lines":      "\n\n\nx\n\n",
		"exactly 16":       "0123456789abcde\n",
		"17 with newline":  "0123456789abcdef\n",
		"long line":        strings.Repeat("x", 100) + "\nshort\n" + strings.Repeat("y", 33),
		"many":             strings.Repeat("line of text\n", 40),
	}
}

// TestLineReaderMatchesBufio: readSlice yields what bufio's ReadSlice does,
// whatever pieces the source returns its input in.
func TestLineReaderMatchesBufio(t *testing.T) {
	readers := map[string]func([]byte) io.Reader{
		"whole":      func(d []byte) io.Reader { return bytes.NewReader(d) },
		"one byte":   func(d []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(d)) },
		"half":       func(d []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(d)) },
		"data+error": func(d []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(d)) },
		"pieces":     func(d []byte) io.Reader { return &chunkReader{data: d, sizes: []int{3, 0, 7, 1, 0, 0, 20}} },
	}
	for name, in := range lineInputs() {
		for _, size := range []int{16, 17, 64, lineReaderSize} {
			want := bufioSlices(t, []byte(in), size)
			for rname, mk := range readers {
				t.Run(fmt.Sprintf("%s/%d/%s", name, size, rname), func(t *testing.T) {
					lr := newLineReader(mk([]byte(in)), size, nil)
					got := readAllSlices(t, lr.readSlice)
					if !sameSlices(got, want) {
						t.Fatalf("got %v\nwant %v", got, want)
					}
				})
			}
		}
	}
}

func sameSlices(a, b []sliceResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].line != b[i].line || !errors.Is(a[i].err, b[i].err) {
			return false
		}
	}
	return true
}

// TestLineReaderNoProgress: a source that never returns anything fails
// with io.ErrNoProgress instead of spinning.
func TestLineReaderNoProgress(t *testing.T) {
	lr := newLineReader(&chunkReader{data: []byte("x"), sizes: []int{0}}, 16, nil)
	if _, err := lr.readSlice(); !errors.Is(err, io.ErrNoProgress) {
		t.Fatalf("err = %v, want io.ErrNoProgress", err)
	}
}

// TestLineReaderRead: Read drains what is buffered, then the source.
func TestLineReaderRead(t *testing.T) {
	lr := newLineReader(strings.NewReader("a\nbcd\nefgh"), 16, nil)
	if line, err := lr.readSlice(); string(line) != "a\n" || err != nil {
		t.Fatalf("readSlice = %q, %v", line, err)
	}
	rest, err := io.ReadAll(lr)
	if string(rest) != "bcd\nefgh" || err != nil {
		t.Fatalf("ReadAll = %q, %v; want the rest", rest, err)
	}
}

// FuzzLineReader: readSlice against bufio's ReadSlice for any input,
// buffer size and pieces.
func FuzzLineReader(f *testing.F) {
	for _, in := range lineInputs() {
		f.Add([]byte(in), uint8(0), []byte{3, 0, 7})
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint8, pieces []byte) {
		n := 16 + int(size)
		sizes := []int{len(data) + 1}
		if len(pieces) > 0 {
			sizes = sizes[:0]
			for _, p := range pieces {
				sizes = append(sizes, int(p%32))
			}
			sizes = append(sizes, 1) // some progress in every cycle
		}
		want := bufioSlices(t, data, n)
		got := readAllSlices(t, newLineReader(&chunkReader{data: data, sizes: sizes}, n, nil).readSlice)
		if !sameSlices(got, want) {
			t.Fatalf("got %v\nwant %v", got, want)
		}
	})
}
