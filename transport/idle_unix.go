//go:build unix

package transport

import (
	"errors"
	"io"
	"os"
	"syscall"
	"time"
)

// of makes p the idle source of f and returns it, or returns nil when the
// runtime does not poll f (a regular file; a pipe does). It clears f's
// read deadline: give it only files no one else set one on.
func (p *polledFile) of(f *os.File) idleSource {
	// Only a polled file takes a read deadline; clearing one that is
	// not set changes nothing.
	if f.SetReadDeadline(time.Time{}) != nil {
		return nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	*p = polledFile{f: f, rc: rc}
	p.readFn = p.readFD
	return p
}

// polledFile is an *os.File whose reads wait for data through the
// runtime's poller before they take a buffer. One goroutine reads it.
type polledFile struct {
	f      *os.File
	rc     syscall.RawConn
	readFn func(fd uintptr) bool // readFD, bound once: a read allocates nothing

	// readFD's argument and results, for readPooled.
	size  int
	piece *[chunkSize]byte
	n     int
	err   error
}

func (p *polledFile) readPooled(size int) (*[chunkSize]byte, int, error) {
	p.size, p.piece, p.n, p.err = size, nil, 0, nil
	if err := p.rc.Read(p.readFn); err != nil {
		return nil, 0, p.waitError(err)
	}
	piece, n, err := p.piece, p.n, p.err
	p.piece = nil
	switch {
	case err != nil:
		return nil, 0, &os.PathError{Op: "read", Path: p.f.Name(), Err: err}
	case piece == nil:
		return nil, 0, io.EOF
	}
	return piece, n, nil
}

// readFD reads from fd into a piece from chunkPool; it reports false,
// holding no piece, when there is nothing to read yet (the runtime then
// waits for the poller and calls it again).
func (p *polledFile) readFD(fd uintptr) bool {
	buf := chunkPool.Get().(*[chunkSize]byte)
	var (
		n   int
		err error
	)
	for {
		n, err = syscall.Read(int(fd), buf[:p.size])
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.EAGAIN {
		chunkPool.Put(buf)
		return false
	}
	if n > 0 {
		p.piece, p.n = buf, n
	} else {
		chunkPool.Put(buf)
		p.err = err
	}
	return true
}

// waitError is the error of a wait for data that failed (the file was
// closed, or its deadline passed) as the file's Read reports it.
func (p *polledFile) waitError(err error) error {
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		// A closed file fails any Read, an empty one too, with the
		// error Read gives.
		if _, rerr := p.f.Read(nil); rerr != nil {
			return rerr
		}
	}
	return &os.PathError{Op: "read", Path: p.f.Name(), Err: err}
}
