package client

import (
	"context"
	"encoding/json"
	"github.com/conduitmcp/conduit/internal/textcut"
	"hash/maphash"
	"iter"

	"github.com/conduitmcp/conduit/protocol"
)

// pageKey is the cache key of one page: "" for the first page, "c:" plus
// the cursor otherwise (an empty-string cursor is still a cursor).
func pageKey(cursor *string) string {
	if cursor == nil {
		return ""
	}
	return "c:" + *cursor
}

// cursorPtr turns the public "" = first page convention into a pointer.
func cursorPtr(cursor string) *string {
	if cursor == "" {
		return nil
	}
	return &cursor
}

// cachedCall sends a request whose modern result is cacheable, serving it
// from the cache while fresh. Legacy results are never cached. A private
// result is stored under the authorization context named before the
// request was sent, the one its credentials belong to.
func (c *Client) cachedCall(ctx context.Context, method, paramsKey string, params any) (json.RawMessage, error) {
	useCache := c.cfg.cache != nil && c.isModern()
	var id identity
	if useCache {
		id.name, id.ok = c.authIdentity(ctx)
		if raw, ok := c.cacheLookup(ctx, id, method, paramsKey); ok {
			return raw, nil
		}
	}
	// A result that needed input (any MRTR round, including one that
	// carried only requestState and ran no handler) is never cached: the
	// session reports every round before sending its retry.
	needed := false
	opts := c.cfg.defaults.sessionOptions()
	opts.OnInputRound = func(int) { needed = true }
	raw, err := c.call(ctx, method, params, opts)
	if err != nil {
		return nil, err
	}
	if useCache && !needed {
		c.cacheStore(ctx, id, method, paramsKey, raw, c.cfg.now())
	}
	return raw, nil
}

// decoded decodes raw, the result of method, into a new R; err, the
// call's error, is passed on.
func decoded[R any](method string, raw json.RawMessage, err error) (*R, error) {
	if err != nil {
		return nil, err
	}
	r := new(R)
	if err := decode(method, raw, r); err != nil {
		return nil, err
	}
	return r, nil
}

// listPage fetches one page of a list method.
func listPage[R any](ctx context.Context, c *Client, method string, cursor *string) (*R, error) {
	raw, err := c.cachedCall(ctx, method, pageKey(cursor), &protocol.PaginatedParams{Cursor: cursor})
	return decoded[R](method, raw, err)
}

// A listing is the paginated list method of one server feature.
type listing[R, T any] struct {
	method, capability string
	offered            func(protocol.ServerCapabilities) bool // the server advertised capability
	page               func(*R) ([]T, *string)                // a page's items and nextCursor
}

// fetch fetches one page. Under CapabilityOptions.Strict a server that
// did not advertise the capability is refused without a round trip.
func (l listing[R, T]) fetch(ctx context.Context, c *Client, cursor *string) (*R, error) {
	if err := c.require(l.method, l.capability, l.offered(c.ServerCapabilities())); err != nil {
		return nil, err
	}
	return listPage[R](ctx, c, l.method, cursor)
}

// all iterates over every item, walking the pages.
func (l listing[R, T]) all(ctx context.Context, c *Client) iter.Seq2[T, error] {
	return walk(ctx, c, l.method, func(ctx context.Context, cur *string) ([]T, *string, error) {
		r, err := l.fetch(ctx, c, cur)
		if err != nil {
			return nil, nil, err
		}
		items, next := l.page(r)
		return items, next, nil
	})
}

func hasPrompts(s protocol.ServerCapabilities) bool   { return s.Prompts != nil }
func hasResources(s protocol.ServerCapabilities) bool { return s.Resources != nil }

var (
	promptsListing = listing[protocol.ListPromptsResult, protocol.Prompt]{protocol.MethodPromptsList, "prompts", hasPrompts,
		func(r *protocol.ListPromptsResult) ([]protocol.Prompt, *string) { return r.Prompts, r.NextCursor }}
	resourcesListing = listing[protocol.ListResourcesResult, protocol.Resource]{protocol.MethodResourcesList, "resources", hasResources,
		func(r *protocol.ListResourcesResult) ([]protocol.Resource, *string) { return r.Resources, r.NextCursor }}
	templatesListing = listing[protocol.ListResourceTemplatesResult, protocol.ResourceTemplate]{protocol.MethodResourcesTemplateList,
		"resources", hasResources,
		func(r *protocol.ListResourceTemplatesResult) ([]protocol.ResourceTemplate, *string) {
			return r.ResourceTemplates, r.NextCursor
		}}
)

// cursorSeed seeds the hashes of the cursors a walk followed: the
// process's own, so that no server can make two cursors collide.
var cursorSeed = maphash.MakeSeed()

// maxCursorShown is how much of a cursor an error quotes.
const maxCursorShown = 100

// walk iterates over every item of a paginated listing. fetch returns one
// page's items and its nextCursor. A repeated cursor ends the walk with a
// *Error of kind KindProtocol, and so does reaching the page cap (1000).
// Items are yielded as pages arrive. The cursors followed are remembered
// as hashes, so that a server's long cursors do not pile up.
func walk[T any](ctx context.Context, c *Client, method string, fetch func(ctx context.Context, cursor *string) ([]T, *string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		var cursor *string
		seen := map[uint64]bool{}
		for pages := 0; ; pages++ {
			if pages >= c.cfg.maxPages {
				yield(zero, newError(method, KindProtocol, "the server sent more than %d pages (cursor %q)", pages, textcut.Cut(deref(cursor), maxCursorShown)))
				return
			}
			items, next, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == nil {
				return
			}
			h := maphash.String(cursorSeed, *next)
			if seen[h] {
				yield(zero, newError(method, KindProtocol, "server repeated the pagination cursor %q after %d pages", textcut.Cut(*next, maxCursorShown), pages+1))
				return
			}
			seen[h] = true
			cursor = next
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func (c *Client) listPrompts(ctx context.Context, cursor *string) (*protocol.ListPromptsResult, error) {
	return promptsListing.fetch(ctx, c, cursor)
}

// Prompts iterates over every prompt, walking the pages. See [Client.Tools]
// for the error behaviour.
func (c *Client) Prompts(ctx context.Context) iter.Seq2[protocol.Prompt, error] {
	return promptsListing.all(ctx, c)
}

func (c *Client) listResources(ctx context.Context, cursor *string) (*protocol.ListResourcesResult, error) {
	return resourcesListing.fetch(ctx, c, cursor)
}

// Resources iterates over every resource, walking the pages. See
// [Client.Tools] for the error behaviour.
func (c *Client) Resources(ctx context.Context) iter.Seq2[protocol.Resource, error] {
	return resourcesListing.all(ctx, c)
}

func (c *Client) listResourceTemplates(ctx context.Context, cursor *string) (*protocol.ListResourceTemplatesResult, error) {
	return templatesListing.fetch(ctx, c, cursor)
}

// ResourceTemplates iterates over every resource template, walking the
// pages. See [Client.Tools] for the error behaviour.
func (c *Client) ResourceTemplates(ctx context.Context) iter.Seq2[protocol.ResourceTemplate, error] {
	return templatesListing.all(ctx, c)
}
