package engine

import (
	"context"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// The legacy HTTP GET stream is optional for the client (2025-11-25
// basic/transports, "Listening for Messages from the Server"; see
// CLIENT-WIRE-REFERENCE.md, legacy Streamable HTTP): a server sends its
// requests and notifications outside a request on it, and everything that
// belongs to a request on that request's POST response. The session opens
// it at connect only when something can arrive on it, and otherwise on the
// first request that asks the server to send outside a request
// (resources/subscribe, logging/setLevel).

// clientInvites reports whether the client's legacy capabilities let the
// server send requests (sampling, elicitation, roots, tasks, experimental
// ones): those arrive on the GET stream.
func clientInvites(c *protocol.ClientCapabilities) bool {
	return c.Sampling != nil || c.Elicitation != nil || c.Roots != nil || c.Tasks != nil || len(c.Experimental) > 0
}

// serverMaySend reports whether the server's capabilities announce
// messages outside a request: list changes, resource updates, log
// messages, task status, or anything experimental.
func serverMaySend(c *protocol.ServerCapabilities) bool {
	return c.Logging != nil || len(c.Tasks) > 0 || len(c.Experimental) > 0 ||
		c.Tools != nil && c.Tools.ListChanged ||
		c.Prompts != nil && c.Prompts.ListChanged ||
		c.Resources != nil && (c.Resources.ListChanged || c.Resources.Subscribe)
}

// deferStream holds the GET stream of conn back during the legacy
// handshake unless the client's capabilities want it at once, or a
// request already asked for it (s.wantStream).
func (s *Session) deferStream(conn transport.Conn) {
	if sd, ok := conn.(transport.StreamDeferrer); ok && !s.wantStream.Load() && !clientInvites(&s.legacyCaps) {
		sd.DeferStream()
	}
}

// openStreamFor lets the GET stream of conn open when the server's
// capabilities announce messages outside a request (the handshake then
// waits for it as before).
func (s *Session) openStreamFor(conn transport.Conn, caps *protocol.ServerCapabilities) {
	if sd, ok := conn.(transport.StreamDeferrer); ok && serverMaySend(caps) {
		sd.OpenStream()
	}
}

// streamBefore opens a deferred GET stream before the first request that
// asks the server to send outside a request, and waits (bounded, never
// fatal) for it to open, so that what the server sends after answering
// is not lost. Other methods return at once.
func (s *Session) streamBefore(ctx context.Context, method string) {
	if method != protocol.MethodResourcesSubscribe && method != protocol.MethodLoggingSetLevel {
		return
	}
	s.wantStream.Store(true)
	v := s.pub.Load()
	if v.ref == nil || v.neg == nil || v.neg.era != negotiation.EraLegacy {
		return
	}
	sd, ok := v.ref.conn.(transport.StreamDeferrer)
	if !ok {
		return
	}
	sd.OpenStream()
	if w, ok := v.ref.conn.(transport.StreamReadyWaiter); ok {
		wctx, cancel := context.WithTimeout(ctx, StreamReadyTimeout)
		err := w.WaitStreamReady(wctx)
		cancel()
		if err != nil {
			s.log.Debug("the server stream did not open in time; going on", "err", err)
		}
	}
}
