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
// belongs to a request on that request's POST response; a 405 means it
// offers none. The session opens it only when something can arrive on it
// that the client acts on:
//
//   - at connect (the handshake then waits for it, bounded), when the
//     client's capabilities invite server requests, or when what the
//     server may send has a consumer from the start: a listener of the
//     handler or a Middleware (see consumesAtConnect);
//   - otherwise before the first request after which the server sends
//     outside a request (resources/subscribe, logging/setLevel), before the
//     first list request of a kind whose listChanged the server declares
//     (from then on the client holds a list that list_changed makes stale:
//     the caller's, the client's tool registry that decides replay safety,
//     a result cache), and when asked ([Session.WantServerMessages], a
//     legacy subscription to list changes).
//
// Once asked for, the stream is opened at once by every later handshake
// of the session (s.wantStream).

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

// consumesAtConnect reports whether something the server may send
// outside a request has a consumer from the start: a listener of the
// handler for what the server's capabilities announce (log messages, a
// list change, task status), an ElicitationCompleteListener (the server
// completes a URL elicitation, which any request may start, with a
// notification and needs no capability for it), or a Middleware, which
// sees every incoming notification. Resource updates need a
// resources/subscribe first, and Config.OnNotification alone does not
// count (package client always sets it; what it does with a notification
// is covered by the on-demand cases of this file).
func (s *Session) consumesAtConnect(c *protocol.ServerCapabilities) bool {
	h := s.cfg.Handler
	if h.ElicitationDone != nil {
		return true
	}
	if !serverMaySend(c) {
		return false
	}
	if s.cfg.Middleware != nil {
		return true
	}
	return h.LogListener != nil && c.Logging != nil ||
		h.ToolsChanged != nil && c.Tools != nil && c.Tools.ListChanged ||
		h.PromptsChanged != nil && c.Prompts != nil && c.Prompts.ListChanged ||
		h.ResourcesChanged != nil && c.Resources != nil && c.Resources.ListChanged ||
		h.TaskStatus != nil && len(c.Tasks) > 0
}

// listChanges reports whether the server declares list changes for the
// list request method.
func listChanges(method string, c *protocol.ServerCapabilities) bool {
	switch method {
	case protocol.MethodToolsList:
		return c.Tools != nil && c.Tools.ListChanged
	case protocol.MethodPromptsList:
		return c.Prompts != nil && c.Prompts.ListChanged
	case protocol.MethodResourcesList, protocol.MethodResourcesTemplateList:
		return c.Resources != nil && c.Resources.ListChanged
	}
	return false
}

// deferStream holds the GET stream of conn back during the legacy
// handshake unless the client's capabilities want it at once, or a
// request already asked for it (s.wantStream).
func (s *Session) deferStream(conn transport.Conn) {
	if sd, ok := conn.(transport.StreamDeferrer); ok && !s.wantStream.Load() && !clientInvites(&s.legacyCaps) {
		sd.DeferStream()
	}
}

// openStreamFor lets the GET stream of ref open when something the
// server's capabilities announce has a consumer from the start (the
// handshake then waits for it as before).
func (s *Session) openStreamFor(ref *connRef, caps *protocol.ServerCapabilities) {
	if sd, ok := ref.conn.(transport.StreamDeferrer); ok && s.consumesAtConnect(caps) {
		sd.OpenStream()
	}
}

// streamBefore opens a deferred GET stream before a request after which
// the server may send outside a request what the client acts on (see the
// top of this file), and waits for it (bounded, never fatal). Other
// requests, and every request once the stream was opened on the current
// connection, return at once.
func (s *Session) streamBefore(ctx context.Context, method string) {
	switch method {
	case protocol.MethodResourcesSubscribe, protocol.MethodLoggingSetLevel:
		s.wantStream.Store(true)
	case protocol.MethodToolsList, protocol.MethodPromptsList, protocol.MethodResourcesList, protocol.MethodResourcesTemplateList:
		v := s.pub.Load()
		if v.neg == nil || v.neg.era != negotiation.EraLegacy || !listChanges(method, v.neg.caps()) {
			return
		}
	default:
		return
	}
	s.WantServerMessages(ctx)
}

// WantServerMessages tells the session that the client now acts on what
// a legacy server sends outside a request (package client calls it for a
// legacy subscription to list changes): a deferred legacy HTTP GET stream
// is opened, and WantServerMessages waits (up to [StreamReadyTimeout],
// never fatal) until the server answered it, so that what the server
// sends after that is received. Every later handshake of the session
// opens the stream at once. It returns at once in the modern era, on
// other transports, and once it was called for the current connection.
func (s *Session) WantServerMessages(ctx context.Context) {
	s.wantStream.Store(true)
	v := s.pub.Load()
	if v.ref == nil || v.neg == nil || v.neg.era != negotiation.EraLegacy || v.ref.streamAsked.Load() {
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
	// Asked for once per connection: the stream runs (or was refused)
	// from here on, and a slow one does not hold every later request.
	v.ref.streamAsked.Store(true)
}
