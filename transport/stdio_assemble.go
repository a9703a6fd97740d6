package transport

import (
	"io"
	"sync"
)

// chunkSize is the size of the pieces in which a message too large for a
// connection's read buffer is gathered. It equals the buffer of the
// line-delimited connections, so a long line is copied out of that buffer
// one full piece at a time.
const chunkSize = lineReaderSize

// chunkPool holds the pieces of messages being assembled and the read
// buffers of connections that give theirs back while idle (see
// lineReader), shared by all connections. A pooled piece is small and the
// pool lets the garbage collector reclaim idle ones, so one huge message
// pins nothing.
var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

// assembler gathers one message of unknown length in pooled fixed-size
// pieces, then copies it once into a buffer of exactly its length (see
// bytes). Unlike appending to one slice, which re-copies everything read
// so far at each growth and ends with up to twice the capacity needed, this
// allocates the message's length and copies each byte twice.
type assembler struct {
	chunks []*[chunkSize]byte
	n      int // bytes gathered; the last chunk holds n - (len(chunks)-1)*chunkSize
}

// len returns the number of bytes gathered.
func (a *assembler) len() int { return a.n }

// free returns the unused tail of the last chunk, taking a new chunk when
// that one is full.
func (a *assembler) free() []byte {
	used := a.n - (len(a.chunks)-1)*chunkSize
	if len(a.chunks) == 0 || used == chunkSize {
		a.chunks = append(a.chunks, chunkPool.Get().(*[chunkSize]byte))
		used = 0
	}
	return a.chunks[len(a.chunks)-1][used:]
}

// write appends p.
func (a *assembler) write(p []byte) {
	for len(p) > 0 {
		k := copy(a.free(), p)
		a.n += k
		p = p[k:]
	}
}

// readFrom appends what r yields until it ends (io.EOF is not an error)
// or, with an error, once more than limit bytes were gathered.
func (a *assembler) readFrom(r io.Reader, limit int) error {
	for {
		k, err := r.Read(a.free())
		a.n += k
		switch {
		case err == io.EOF:
			return nil
		case err != nil:
			return err
		case a.n > limit:
			return &MessageTooLargeError{Limit: limit}
		}
	}
}

// small returns the gathered bytes when they fit in one chunk, without
// copying them, or nil. The slice is valid until reset.
func (a *assembler) small() []byte {
	if len(a.chunks) != 1 {
		return nil
	}
	return a.chunks[0][:a.n]
}

// bytes returns the gathered bytes followed by tail in a new slice of
// exactly that length, and resets a.
func (a *assembler) bytes(tail []byte) []byte {
	b := make([]byte, a.n+len(tail))
	off := 0
	for _, c := range a.chunks {
		off += copy(b[off:a.n], c[:])
	}
	copy(b[a.n:], tail)
	a.reset()
	return b
}

// reset drops what was gathered and returns the chunks to the pool.
func (a *assembler) reset() {
	for i, c := range a.chunks {
		chunkPool.Put(c)
		a.chunks[i] = nil
	}
	a.chunks = a.chunks[:0]
	a.n = 0
}
