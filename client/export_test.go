package client

import (
	"context"
	"time"

	"github.com/conduitmcp/conduit/protocol"
)

// WithClock replaces the client's clock (cache freshness, discover TTL).
func WithClock(now func() time.Time) Option { return withClock(now) }

// NotifyRootsChanged sends notifications/roots/list_changed as
// [Client.SetRoots] has it sent on a change.
func (c *Client) NotifyRootsChanged(ctx context.Context) error { return c.notifyRootsChanged(ctx) }

// ReadCacheHints reads a result's ttlMs and cacheScope as the cache does.
func ReadCacheHints(result []byte) (time.Duration, string) { return readCacheHints(result) }

// WithMaxPages lowers the page cap of listing walks.
func WithMaxPages(n int) Option { return withMaxPages(n) }

// The one-page listings, for tests of pagination and caching.

func (c *Client) ListTools(ctx context.Context, cursor string) (*protocol.ListToolsResult, error) {
	return c.listTools(ctx, cursorPtr(cursor))
}

func (c *Client) ListPrompts(ctx context.Context, cursor string) (*protocol.ListPromptsResult, error) {
	return c.listPrompts(ctx, cursorPtr(cursor))
}

func (c *Client) ListResources(ctx context.Context, cursor string) (*protocol.ListResourcesResult, error) {
	return c.listResources(ctx, cursorPtr(cursor))
}

func (c *Client) ListResourceTemplates(ctx context.Context, cursor string) (*protocol.ListResourceTemplatesResult, error) {
	return c.listResourceTemplates(ctx, cursorPtr(cursor))
}
