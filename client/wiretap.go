package client

import (
	"context"
	"log/slog"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// Direction says which way a message travelled ([WithMessageLog]).
type Direction int

// Directions.
const (
	// Sent: from the client to the server.
	Sent Direction = iota + 1
	// Received: from the server to the client.
	Received
)

// String returns "send" or "recv".
func (d Direction) String() string {
	switch d {
	case Sent:
		return "send"
	case Received:
		return "recv"
	}
	return "unknown"
}

// WithMessageLog calls f with every JSON-RPC message the client sends or
// receives, on every transport (stdio, Streamable HTTP, HTTP+SSE,
// WebSocket, in-memory), including the negotiation's and those of
// reconnections. f is called synchronously on the goroutine that reads or
// writes the message, possibly concurrently: it must be safe for
// concurrent use, must not block, must not modify msg and must not keep it
// after returning. A message that fails to be written is still reported.
// Default (and nil): none. See [WithWireLog] for a ready-made logger.
func WithMessageLog(f func(dir Direction, msg jsonrpc.Message)) Option {
	return optionFunc(func(c *config) { c.messageLog = f })
}

// maxWireLogMessage bounds the text of one message in [WithWireLog].
const maxWireLogMessage = 16 << 10

// WithWireLog logs every JSON-RPC message the client sends or receives to
// l at debug level, as "wire: send" or "wire: recv" with the encoded
// message in the "msg" attribute (cut at 16 KiB). It is [WithMessageLog]
// with a logger; the last of the two options wins. Nil logs nothing.
func WithWireLog(l *slog.Logger) Option {
	if l == nil {
		return WithMessageLog(nil)
	}
	return WithMessageLog(func(dir Direction, msg jsonrpc.Message) {
		if !l.Enabled(context.Background(), slog.LevelDebug) {
			return
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			l.Debug("wire: "+dir.String(), "err", err)
			return
		}
		s := string(b)
		if len(s) > maxWireLogMessage {
			s = s[:maxWireLogMessage] + "…"
		}
		l.Debug("wire: "+dir.String(), "msg", s)
	})
}

// tap feeds the message log ([WithMessageLog]) with the messages of every
// connection of one client. It is installed only when a log is set.
type tap struct {
	log func(Direction, jsonrpc.Message) // nil for none
}

// tapTransport wraps a transport so that every connection it makes is a
// tapped one.
type tapTransport struct {
	inner transport.Transport
	tap   *tap
}

// Connect implements transport.Transport.
func (t *tapTransport) Connect(ctx context.Context) (transport.Conn, error) {
	conn, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return wrapConn(conn, t.tap), nil
}

// tapConn is a connection whose messages pass through a tap. The value
// wrapConn (tapconn_gen.go) returns embeds it together with exactly the
// optional interfaces of package transport (Kinder, SessionIDer,
// ProtocolVersionSetter, StreamCanceler, StreamReadyWaiter) the wrapped
// connection implements, each forwarded to it, so that type assertions on
// the tapped connection answer as they would on the original. Unwrap
// returns the original. When package transport defines a new optional
// interface, add it to gen_tapconn.go and run go generate
// (TestTapPreservesMethods fails until then).
//
//go:generate go run gen_tapconn.go
type tapConn struct {
	inner transport.Conn
	tap   *tap
}

// Read implements transport.Conn.
func (c *tapConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.inner.Read(ctx)
	if err == nil && msg != nil && c.tap.log != nil {
		c.tap.log(Received, msg)
	}
	return msg, err
}

// Write implements transport.Conn.
func (c *tapConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if c.tap.log != nil {
		c.tap.log(Sent, msg)
	}
	return c.inner.Write(ctx, msg)
}

// Close implements transport.Conn.
func (c *tapConn) Close() error { return c.inner.Close() }

// Unwrap returns the wrapped connection.
func (c *tapConn) Unwrap() transport.Conn { return c.inner }
