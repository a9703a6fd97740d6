package client

import (
	"context"

	"github.com/conduitmcp/conduit/client/internal/link"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// The hooks of package link, for the packages under client.
func init() {
	link.OpenStream = func(ctx context.Context, c any, method string, params any) (link.Stream, error) {
		cl := c.(*Client)
		st, err := cl.sess.OpenStream(ctx, method, params)
		if err != nil {
			return nil, cl.fail(method, err)
		}
		return st, nil
	}
	link.Observe = func(c any, f func(*jsonrpc.Request)) func() {
		return c.(*Client).observe(f)
	}
	link.Track = func(c any) (func(), bool) {
		cl := c.(*Client)
		cl.subsMu.Lock()
		defer cl.subsMu.Unlock()
		if isClosing(cl.closed) {
			return nil, false
		}
		cl.wg.Add(1)
		return cl.wg.Done, true
	}
	link.Modern = func(c any) bool { return c.(*Client).isModern() }
}

// observer is one function of link.Observe.
type observer struct{ f func(*jsonrpc.Request) }

// observe adds f to the observers onNotification calls.
func (c *Client) observe(f func(*jsonrpc.Request)) (remove func()) {
	o := &observer{f: f}
	c.subsMu.Lock()
	if c.observers == nil {
		c.observers = make(map[*observer]struct{})
	}
	c.observers[o] = struct{}{}
	c.subsMu.Unlock()
	return func() {
		c.subsMu.Lock()
		delete(c.observers, o)
		c.subsMu.Unlock()
	}
}
