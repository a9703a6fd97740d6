package client

import (
	"context"
	"encoding/json"
	"time"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// ReadResource reads the resource at uri (resources/read). In the modern
// era the result is cacheable ([WithCache]) and the server may ask for
// input first (the handler answers it; such results are not cached).
//
// A missing resource is a [*jsonrpc.Error]: -32002 from legacy servers,
// -32602 from modern ones; [jsonrpc.IsResourceNotFound] accepts both.
func (c *Client) ReadResource(ctx context.Context, uri string) (*protocol.ReadResourceResult, error) {
	if err := c.require(protocol.MethodResourcesRead, "resources", c.ServerCapabilities().Resources != nil); err != nil {
		return nil, err
	}
	raw, err := c.cachedCall(ctx, protocol.MethodResourcesRead, uri, &protocol.ReadResourceParams{URI: uri})
	return decoded[protocol.ReadResourceResult](protocol.MethodResourcesRead, raw, err)
}

// SetLogLevel asks the server for log messages at level and above. Legacy:
// logging/setLevel. Modern: the level is remembered and sent with every
// later request as _meta logLevel (messages then arrive on each request's
// stream); no request is sent. Messages reach the handler's
// [handler.LogListener].
func (c *Client) SetLogLevel(ctx context.Context, level protocol.LoggingLevel) error {
	if err := c.require(protocol.MethodLoggingSetLevel, "logging", c.ServerCapabilities().Logging != nil); err != nil {
		return err
	}
	if c.isModern() {
		c.logLevel.Store(level)
		return nil
	}
	_, err := c.call(ctx, protocol.MethodLoggingSetLevel, &protocol.SetLevelParams{Level: level}, nil)
	return err
}

// Ping checks that the server is alive. Legacy: ping. Modern (which has no
// ping): a fresh server/discover, which also refreshes what the client
// knows of the server ([Negotiation].Discover, [Client.Instructions],
// [Client.ServerCapabilities]).
func (c *Client) Ping(ctx context.Context) error {
	if c.isModern() {
		return c.fetchDiscover(ctx)
	}
	_, err := c.call(ctx, protocol.MethodPing, &protocol.PingParams{}, nil)
	return err
}

// notifyRootsChanged tells a legacy server that the roots changed
// (notifications/roots/list_changed); [Client.SetRoots] has it called on
// every change. It
// is sent only when the client advertised roots.listChanged (a RootsLister
// handler plus CapabilityOptions.RootsListChanged) and is a no-op
// otherwise. The modern era has no such notification: the server asks for
// roots when it needs them, so it is a no-op there too.
func (c *Client) notifyRootsChanged(ctx context.Context) error {
	if c.isModern() {
		return nil
	}
	if r := c.sess.ClientCapabilities().Roots; r == nil || !r.ListChanged {
		return nil
	}
	return opError(protocol.NotificationRootsListChanged, c.sess.Notify(ctx, protocol.NotificationRootsListChanged, &protocol.RootsListChangedParams{}))
}

// discoverEntry is a server/discover result and when it stops being
// fresh.
type discoverEntry struct {
	res     *negotiation.DiscoverResult
	expires time.Time
}

// freshDiscover returns the newest discover result known without a round
// trip: the one recorded last (a server/discover sent by Ping or Call),
// else the negotiation's.
func (c *Client) freshDiscover() *negotiation.DiscoverResult {
	c.discMu.Lock()
	d := c.disc
	c.discMu.Unlock()
	if d != nil {
		return d.res
	}
	return c.sess.Discover()
}

// seedDiscover records the negotiation's discover result, received at
// connect time.
func (c *Client) seedDiscover() {
	if res := c.sess.Discover(); res != nil {
		c.setDiscover(res, c.cfg.now())
	}
}

// setDiscover records res, received at received; it stays fresh for its
// ttlMs (which the era cache record keeps).
func (c *Client) setDiscover(res *negotiation.DiscoverResult, received time.Time) {
	c.discMu.Lock()
	c.disc = &discoverEntry{res: res, expires: received.Add(msTTL(res.TTLMs))}
	c.discMu.Unlock()
}

// noteDiscover records raw, a server/discover result just received.
func (c *Client) noteDiscover(raw json.RawMessage) error {
	received := c.cfg.now()
	res, err := negotiation.ParseDiscoverResult(raw)
	if err != nil {
		return resultError(protocol.MethodDiscover, err)
	}
	c.setDiscover(res, received)
	return nil
}

// fetchDiscover sends server/discover and records the result.
func (c *Client) fetchDiscover(ctx context.Context) error {
	raw, err := c.call(ctx, protocol.MethodDiscover, &protocol.DiscoverParams{}, nil)
	if err != nil {
		return err
	}
	return c.noteDiscover(raw)
}

// msTTL converts a ttlMs hint, clamped to [0, one year] so a hostile value
// cannot overflow.
func msTTL(ms int64) time.Duration {
	const maxTTL = 365 * 24 * time.Hour
	if ms <= 0 {
		return 0
	}
	if ms >= int64(maxTTL/time.Millisecond) {
		return maxTTL
	}
	return time.Duration(ms) * time.Millisecond
}
