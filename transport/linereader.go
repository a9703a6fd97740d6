package transport

import (
	"bufio"
	"bytes"
	"io"
)

// lineReader is the read buffer of a line-delimited connection: a
// bufio.Reader's ReadSlice('\n') for one reader goroutine, whose buffer a
// connection waiting for its peer need not hold.
//
// With an idle source (a stdio server's stdout on Unix: see
// polledFile), the buffer is a pooled piece taken when data arrives and
// given back whenever everything read has been consumed, so an idle
// connection holds none of it: 16 KiB per server for a host that keeps
// hundreds connected. Otherwise the buffer is made at the first read and
// kept, as bufio's.
type lineReader struct {
	src  io.Reader
	idle idleSource // nil: the buffer is kept
	size int        // the buffer's length

	buf    []byte
	pooled *[chunkSize]byte // buf's backing piece when it came from chunkPool
	r, w   int              // buf[r:w] is read and not yet consumed
	err    error            // the error that ended the last fill; sticky
}

// idleSource reads from a descriptor whose reads can wait for data without
// a buffer (polledFile, idle_unix.go).
type idleSource interface {
	// readPooled waits until data is readable, then reads it into a
	// piece from chunkPool trimmed to size, which it returns with the
	// count. A wait that ends without data (an error, the end of the
	// stream) returns no piece.
	readPooled(size int) (p *[chunkSize]byte, n int, err error)
}

// newLineReader returns a reader of src with a buffer of size bytes (at
// most chunkSize); idle, when not nil, reads src (see idleSource).
func newLineReader(src io.Reader, size int, idle idleSource) *lineReader {
	return &lineReader{src: src, idle: idle, size: min(size, chunkSize)}
}

// readSlice reads until the first '\n' and returns a slice of the buffer
// holding the bytes up to and including it, valid until the next call. It
// fails with bufio.ErrBufferFull and the full buffer when the buffer
// holds no newline, and with the error that ended the stream (and what
// was read before it) at its end: as bufio.Reader.ReadSlice, except that
// errors are sticky.
func (b *lineReader) readSlice() ([]byte, error) {
	b.release()
	s := 0 // where the search for '\n' starts in buf[r:w]
	for {
		if i := bytes.IndexByte(b.buf[b.r+s:b.w], '\n'); i >= 0 {
			line := b.buf[b.r : b.r+s+i+1]
			b.r += s + i + 1
			return line, nil
		}
		if b.err != nil {
			line := b.buf[b.r:b.w]
			b.r = b.w
			return line, b.err
		}
		if b.w-b.r == b.size {
			b.r = b.w
			return b.buf, bufio.ErrBufferFull
		}
		s = b.w - b.r
		b.fill()
	}
}

// release gives the pooled buffer back when nothing in it is left to
// consume: the slice the last readSlice returned is no longer valid.
func (b *lineReader) release() {
	if b.pooled == nil || b.r != b.w {
		return
	}
	chunkPool.Put(b.pooled)
	b.pooled, b.buf, b.r, b.w = nil, nil, 0, 0
}

// fill reads more into buf (made or taken when there is none), after
// moving what is left to its start; a failure is kept in b.err.
func (b *lineReader) fill() {
	if b.r > 0 {
		copy(b.buf, b.buf[b.r:b.w])
		b.w -= b.r
		b.r = 0
	}
	if b.buf == nil && b.idle != nil {
		p, n, err := b.idle.readPooled(b.size)
		if p != nil {
			b.pooled, b.buf, b.w = p, p[:b.size], n
		}
		b.err = err
		return
	}
	if b.buf == nil {
		b.buf = make([]byte, b.size)
	}
	// A reader that returns nothing and no error is asked again, as
	// bufio does, a bounded number of times.
	for range 100 {
		n, err := b.src.Read(b.buf[b.w:])
		b.w += n
		if err != nil {
			b.err = err
			return
		}
		if n > 0 {
			return
		}
	}
	b.err = io.ErrNoProgress
}

// Read implements io.Reader: what the buffer holds, then src directly. It
// is for draining the stream once framing has stopped.
func (b *lineReader) Read(p []byte) (int, error) {
	if b.r < b.w {
		n := copy(p, b.buf[b.r:b.w])
		b.r += n
		return n, nil
	}
	b.release()
	if b.err != nil {
		return 0, b.err
	}
	return b.src.Read(p)
}
