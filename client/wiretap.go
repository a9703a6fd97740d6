package client

import (
	"context"
	"github.com/conduitmcp/conduit/internal/textcut"
	"log/slog"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// WithMessageLog calls f with every JSON-RPC message the client sends
// (sent is true) or receives (sent is false), on every transport (stdio, Streamable HTTP, HTTP+SSE,
// WebSocket, in-memory), including the negotiation's and those of
// reconnections. f is called synchronously on the goroutine that reads or
// writes the message, possibly concurrently: it must be safe for
// concurrent use, must not block, must not modify msg and must not keep it
// after returning. A message that fails to be written is still reported.
// json.Marshal(msg) gives its JSON-RPC wire form, as
// [jsonrpc.EncodeMessage] does. Default (and nil): none. See [WithWireLog] for a ready-made logger.
func WithMessageLog(f func(sent bool, msg jsonrpc.Message)) Option {
	return optionFunc(func(c *config) { c.messageLog = f })
}

// maxWireLogMessage bounds the text of one message in [WithWireLog].
const maxWireLogMessage = 16 << 10

// WithWireLog logs every JSON-RPC message the client sends or receives to
// l at level, as "wire: send" or "wire: recv" with the direction in the
// "dir" attribute and the encoded message in the "message" attribute (cut
// at 16 KiB, between characters); neither collides with slog's own keys.
// It is [WithMessageLog] with a logger; the last of the two options wins.
// Nil logs nothing.
func WithWireLog(l *slog.Logger, level slog.Level) Option {
	if l == nil {
		return WithMessageLog(nil)
	}
	return WithMessageLog(func(sent bool, msg jsonrpc.Message) {
		ctx := context.Background()
		dir := "recv"
		if sent {
			dir = "send"
		}
		if !l.Enabled(ctx, level) {
			return
		}
		b, err := jsonrpc.EncodeMessage(msg)
		if err != nil {
			l.Log(ctx, level, "wire: "+dir, "dir", dir, "err", err)
			return
		}
		l.Log(ctx, level, "wire: "+dir, "dir", dir, "message", textcut.CutBytes(b, maxWireLogMessage))
	})
}
