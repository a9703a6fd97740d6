package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/protocol"
)

// WithClientIdentity makes this request advertise caps as its client
// capabilities and info as its client info, in place of the client's own
// (a nil argument keeps the client's): a gateway or relay serving many
// callers over one client speaks for each caller in turn. It applies to
// the modern era, where every request carries them in _meta (an MRTR
// round's retries carry them too). caps may advertise only what the
// client's handler can serve — sampling needs a handler.Sampler, form
// elicitation a handler.Elicitor, URL elicitation a handler.URLElicitor,
// roots a handler.RootsLister — unless the call takes its input by hand
// ([WithManualInput]); otherwise the call fails with an [*Error] of kind
// [KindInvalid] before anything is sent. In the legacy era the
// capabilities and client info are the session's, sent once in
// initialize, and no request can change them: the call fails with an
// [*Error] of kind [KindUnsupported] matching [ErrNotSupported], rather
// than be sent under the session's identity. Default: the client's own.
func WithClientIdentity(caps *protocol.ClientCapabilities, info *protocol.Implementation) CallOption {
	var id *engine.Identity
	if caps != nil || info != nil {
		id = &engine.Identity{Capabilities: caps, Info: info}
		if caps != nil {
			c := *caps
			id.Capabilities = &c
		}
		if info != nil {
			i := *info
			id.Info = &i
		}
	}
	return callOptionFunc(func(c *callConfig) { c.ident = id })
}

// identityError checks cc's identity against the era and the handler.
func (c *Client) identityError(cc *callConfig) error {
	id := cc.ident
	if id == nil {
		return nil
	}
	if !c.isModern() {
		return &Error{Kind: KindUnsupported, Err: fmt.Errorf("per-request client capabilities need protocol 2026-07-28; in the legacy era they are the session's: %w", ErrNotSupported)}
	}
	caps := id.Capabilities
	if caps == nil || cc.manual {
		return nil
	}
	h := c.listeners
	var missing []string
	if caps.Sampling != nil && h.Sampler == nil {
		missing = append(missing, "sampling (no handler.Sampler)")
	}
	if e := caps.Elicitation; e != nil {
		if (e.Form != nil || e.URL == nil) && h.Elicitor == nil {
			missing = append(missing, "form elicitation (no handler.Elicitor)")
		}
		if e.URL != nil && h.URLElicitor == nil {
			missing = append(missing, "URL elicitation (no handler.URLElicitor)")
		}
	}
	if caps.Roots != nil && h.RootsLister == nil {
		missing = append(missing, "roots (no handler.RootsLister)")
	}
	if len(missing) > 0 {
		return &Error{Kind: KindInvalid, Err: fmt.Errorf("WithClientIdentity advertises what the handler cannot serve: %v", missing)}
	}
	return nil
}

// identityContext returns ctx carrying cc's identity for the engine.
func identityContext(ctx context.Context, cc *callConfig) context.Context {
	if cc.ident == nil {
		return ctx
	}
	return engine.WithIdentity(ctx, *cc.ident)
}

// optionKind is the kind of an option's error: its own when it is an
// *Error (WithClientIdentity's), else KindInvalid.
func optionKind(err error) (Kind, error) {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind, e.Err
	}
	return KindInvalid, err
}
