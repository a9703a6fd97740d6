package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/protocol"
)

// Call sends a request for any method, typed wrapper or not (vendor
// methods, extensions), and decodes its result into result unless result
// is nil. params is marshalled to a JSON object (nil sends no params);
// a json.RawMessage is sent as it is. The request takes the same path as
// every typed call: in the modern era it carries the _meta envelope
// (protocol version, client capabilities and info) and, on Streamable
// HTTP, the standard headers; timeouts, replay and healing apply as for
// any request; [WithCallMeta] and [WithCallHeaders] add per-call _meta
// entries and HTTP headers, and [WithMiddleware] sees the call. A modern
// server/discover sent this way also refreshes what the client knows of
// the server ([Negotiation].Discover); a result that is not a valid
// DiscoverResult is then an *Error of kind [KindProtocol]. A server error is a *jsonrpc.Error; every other failure is
// an *Error whose Op is method.
func (c *Client) Call(ctx context.Context, method string, params, result any, opts ...CallOption) error {
	if method == "" {
		return &Error{Op: "call", Kind: KindInvalid, Err: fmt.Errorf("empty method name")}
	}
	cc := c.callOptions(opts)
	if err := cc.optionError(method); err != nil {
		return err
	}
	raw, err := c.call(identityContext(ctx, &cc), method, params, cc.sessionOptions())
	if err != nil {
		return err
	}
	if method == protocol.MethodDiscover && c.isModern() {
		// What the client knows of the server follows the newest result.
		if err := c.noteDiscover(raw); err != nil {
			return err
		}
	}
	if result == nil {
		return nil
	}
	if r, ok := result.(*json.RawMessage); ok {
		*r = append((*r)[:0], raw...)
		return nil
	}
	return decode(method, raw, result)
}

// Notify sends a notification for any method. params is marshalled as for
// [Client.Call]. A notification has no answer: Notify returns once it was
// written.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	if method == "" {
		return &Error{Op: "notify", Kind: KindInvalid, Err: fmt.Errorf("empty method name")}
	}
	return c.fail(method, c.sess.Notify(ctx, method, params))
}
