package transport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
)

// Pipe is the client side of an in-memory connection to a server running
// in the same process, made by [NewPipe]. It speaks newline-delimited JSON,
// like [Stdio], and its connection's Kind is [KindMemory], which the
// session treats like stdio.
//
// A Pipe connects once: the second Connect fails, because the server side
// is a single stream.
type Pipe struct {
	// MaxMessageSize is the largest message accepted from the server, in
	// bytes, not counting the line ending; 0 or negative means 16 MiB.
	// A longer line ends the connection with a [*MessageTooLargeError];
	// no more than that is ever buffered.
	MaxMessageSize int
	// Logger receives warnings about skipped lines; nil discards them.
	Logger *slog.Logger

	mu   sync.Mutex
	end  net.Conn // the client end; nil after Connect
	used bool
}

// errPipeUsed is returned by a second Connect on the same [Pipe].
var errPipeUsed = errors.New("transport: pipe already connected")

// NewPipe returns the two ends of an in-memory connection: the client
// transport and the server's stream, on which a server reads
// newline-delimited JSON-RPC messages and writes its own the same way.
// Closing either end ends the connection for both.
func NewPipe() (*Pipe, io.ReadWriteCloser) {
	client, server := net.Pipe()
	return &Pipe{end: client}, server
}

// Kind returns [KindMemory].
func (p *Pipe) Kind() string { return KindMemory }

// Connect returns the connection over the client end. It fails on a zero
// Pipe and when called a second time.
func (p *Pipe) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p.mu.Lock()
	end, used := p.end, p.used
	p.end, p.used = nil, true
	p.mu.Unlock()
	if used {
		return nil, errPipeUsed
	}
	if end == nil {
		return nil, errors.New("transport: Pipe not made by NewPipe")
	}
	c := &pipeConn{lineConn: newLineConn(KindMemory, end, end, p.MaxMessageSize, p.Logger), end: end}
	// The reader goroutine; joined by Close.
	go c.readLoop()
	return c, nil
}

// pipeConn is the connection of a [Pipe] (and of a [Stream]).
type pipeConn struct {
	*lineConn
	end       io.Closer // closing it unblocks the reader and a blocked Write
	closeOnce sync.Once
}

// Close closes the client end and joins the reader goroutine. It returns
// nil.
func (c *pipeConn) Close() error {
	c.closeOnce.Do(func() {
		c.beginClose()
		// Closing the end unblocks the reader goroutine and a
		// Write blocked on a server that does not read.
		c.end.Close()
	})
	<-c.readDone
	return nil
}
