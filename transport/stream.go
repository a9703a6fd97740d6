package transport

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
)

// KindStream is the [Kinder] kind of a [Stream] connection.
const KindStream = "stream"

// Stream is a transport over any byte stream the caller supplies — a
// net.Conn (a Unix socket, a TCP or vsock connection), a named pipe, an
// SSH channel: any io.ReadWriteCloser — speaking newline-delimited JSON,
// one message per line, as [Stdio] does (the same framing code and limits).
//
// Each Connect calls Dial, so a session that lost its connection makes a
// new one (a reconnect, as for WebSocket). [NewStream] wraps one stream
// that cannot be made again; [DialStream] dials a network address.
//
// A Stream connection is of the HTTP class ([ClassOf]): a probe that times
// out is retried, never read as a legacy server (only a stdio child
// process gets that reading, seed 003).
//
// A blocked Write ends when its context ends if the stream has
// SetWriteDeadline (a net.Conn, an *os.File pipe); otherwise when the
// connection is closed. Close closes the stream and joins the reader.
type Stream struct {
	// Dial opens the byte stream; required.
	Dial func(ctx context.Context) (io.ReadWriteCloser, error)
	// MaxMessageSize is the largest message accepted from the server, in
	// bytes, not counting the line ending; 0 or negative means 16 MiB. A
	// longer line ends the connection with a [*MessageTooLargeError].
	MaxMessageSize int
	// Logger receives warnings about skipped lines; nil discards them.
	Logger *slog.Logger
	// Address names the stream in errors (for instance "unix:/run/mcp.sock");
	// optional.
	Address string
}

var _ Transport = (*Stream)(nil)

// errNoDial is returned by Connect on a Stream without Dial.
var errNoDial = errors.New("transport: Stream has no Dial")

// errStreamUsed is returned by a second Connect of a [NewStream] stream.
var errStreamUsed = errors.New("transport: the stream of NewStream was already connected")

// NewStream returns a Stream over rwc, which it connects once: a later
// Connect (a reconnect after the stream was lost) fails.
func NewStream(rwc io.ReadWriteCloser) *Stream {
	var mu sync.Mutex
	used := false
	return &Stream{Dial: func(context.Context) (io.ReadWriteCloser, error) {
		mu.Lock()
		defer mu.Unlock()
		if used {
			return nil, errStreamUsed
		}
		used = true
		return rwc, nil
	}}
}

// DialStream returns a Stream that dials address on network ("unix",
// "tcp", …; see net.Dial) at each Connect.
func DialStream(network, address string) *Stream {
	return &Stream{Address: network + ":" + address, Dial: func(ctx context.Context) (io.ReadWriteCloser, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, address)
	}}
}

// Kind returns [KindStream].
func (s *Stream) Kind() string { return KindStream }

// Connect opens the byte stream with Dial and returns the connection over
// it; Dial's error is returned as a [*NetworkError].
func (s *Stream) Connect(ctx context.Context) (Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if s.Dial == nil {
		return nil, errNoDial
	}
	rwc, err := s.Dial(ctx)
	if err != nil {
		return nil, &NetworkError{Op: "dial", URL: s.Address, Err: err}
	}
	if rwc == nil {
		return nil, &NetworkError{Op: "dial", URL: s.Address, Err: errors.New("the Dial function returned no stream")}
	}
	c := &pipeConn{lineConn: newLineConn(KindStream, rwc, rwc, s.MaxMessageSize, s.Logger), end: rwc}
	// The reader goroutine; joined by Close.
	go c.readLoop()
	return c, nil
}
