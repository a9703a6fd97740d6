package engine

import (
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// Identity replaces, for the modern requests made with a context from
// [WithIdentity], the client capabilities and client info their _meta
// advertises: a gateway relaying many callers over one session speaks
// for each caller in turn. A nil member keeps the session's. The legacy
// era has no per-request capabilities (they are the session's, sent once
// in initialize): there a request carries no _meta envelope and the
// identity does not apply.
type Identity struct {
	Capabilities *protocol.ClientCapabilities
	Info         *protocol.Implementation
}

type identityKey struct{}

// WithIdentity returns ctx carrying id for the requests made with it (an
// MRTR round's retries included).
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

func identityOf(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok && (id.Capabilities != nil || id.Info != nil)
}

// buildRequestFor is buildRequest, with the _meta envelope of the
// identity ctx carries, if any, on a modern request.
func (s *Session) buildRequestFor(ctx context.Context, c *call, sp *sendSpec) (*jsonrpc.Request, error) {
	id, ok := identityOf(ctx)
	if !ok || c.neg.era != negotiation.EraModern {
		return s.buildRequest(c, sp.params, sp.level)
	}
	caps, info := s.modernCaps, *s.cfg.ClientInfo
	if id.Capabilities != nil {
		caps = *id.Capabilities
	}
	if id.Info != nil {
		info = *id.Info
	}
	prefix, err := buildPrefix(c.neg.version, caps, info)
	if err != nil {
		return nil, fmt.Errorf("encoding the _meta: %w", err)
	}
	body, err := spliceMeta(nil, sp.params, prefix, c.token, sp.level)
	if err != nil {
		return nil, fmt.Errorf("encoding the params: %w", err)
	}
	c.req = jsonrpc.Request{ID: jsonrpc.Int64ID(c.id), Method: c.method, Params: body}
	return &c.req, nil
}
