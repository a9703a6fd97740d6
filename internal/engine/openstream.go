package engine

import (
	"context"
)

// OpenStream opens a long-lived modern request of method other than
// subscriptions/listen whose server answers with notifications tagged, in
// _meta io.modelcontextprotocol/subscriptionId, with the request's id —
// the events extension's events/stream. The notifications are routed to
// the returned [Stream] as a listen stream's are; it ends as a
// non-durable listen stream does (it is never opened again by the
// engine: its owner reconnects, with its own cursor). It returns once the
// request is sent, and [ErrNotModern] on a legacy session.
func (s *Session) OpenStream(ctx context.Context, method string, params any) (*Stream, error) {
	return s.listenAuthorized(ctx, method, params, false)
}
