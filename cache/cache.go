// Package cache holds what a client remembers about servers across
// requests and connections:
//
//   - the store of cacheable modern MCP results a client serves while
//     their ttlMs lasts (client.WithCache): the [Store] interface, its
//     [Key] and [Entry], and an in-memory [Store] ([NewMemory]);
//   - the store of negotiation verdicts that lets a reconnect skip the
//     era probe (client.WithEraCache): the [EraStore] interface, its
//     [EraRecord], and an in-memory and a file [EraStore]
//     ([NewMemoryEraStore], [NewFileEraStore]).
//
// A store may be served over the network (a fleet of replicas sharing
// one, see the redisstore module): every method takes a context and
// returns an error. The client treats a store as an optimization: when
// one fails, the call goes on without it (a miss, nothing stored), the
// failure is logged once until the store works again, and no call fails
// because of it.
//
// # Concurrency
//
// Every store here is safe for concurrent use and may be shared by
// several clients.
package cache

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"time"
)

// Key identifies one cached result. Each page of a listing is its own
// entry (Params is its cursor); a resources/read entry's Params is the URI.
type Key struct {
	// Server is the server key: the endpoint URL of client.Dial, or the
	// ServerKey of client.Connect's transport (see client.WithEraCache).
	Server string
	// Partition is "public" for public entries and "private:<identity>"
	// for private ones, identity naming the authorization context (""
	// for a client without credentials; see client.Auth's Tokens for how
	// a context is named).
	Partition string
	// Method is the request method, e.g. "tools/list".
	Method string
	// Params is what distinguishes results of one method: the cursor for
	// listings, the URI for resources/read.
	Params string
}

// Entry is one cached result.
type Entry struct {
	// Result is the raw result as the server sent it.
	Result json.RawMessage
	// Expires is when the entry stops being fresh (receive time + ttlMs).
	Expires time.Time
	// Scope is "public" or "private".
	Scope string
}

// Store stores cacheable results (client.WithCache). Implementations must be
// safe for concurrent use; every method may block on I/O, is bounded by
// ctx, and is idempotent. A store may evict entries at any time; it may
// keep entries past Expires (the client checks freshness itself). An
// error means the store could not serve the call: the client then goes
// on without the cache.
type Store interface {
	// LoadResult returns the entry for key and whether there was one.
	LoadResult(ctx context.Context, key Key) (Entry, bool, error)
	// StoreResult records e for key, replacing any previous entry.
	StoreResult(ctx context.Context, key Key, e Entry) error
	// DeleteResults removes every entry sel matches (see [Selector.Match]).
	DeleteResults(ctx context.Context, sel Selector) error
}

// Selector names the entries [Store.DeleteResults] removes: entries of
// one server, narrowed by partition, method and resource URI. It is
// shaped so that a store can index it: by server first, then method and
// partition.
type Selector struct {
	// Server is the server key ([Key].Server); required.
	Server string
	// Partition, when set, keeps only entries of that partition.
	Partition string
	// Methods, when set, keeps only entries of those methods.
	Methods []string
	// URI, when set, keeps only entries whose Params is URI, a prefix of
	// it, or begins with it: a resources/read of the resource, of one
	// that contains it, or of one under it.
	URI string
}

// Match reports whether sel names the entry of k.
func (sel Selector) Match(k Key) bool {
	if k.Server != sel.Server {
		return false
	}
	if sel.Partition != "" && k.Partition != sel.Partition {
		return false
	}
	if len(sel.Methods) > 0 && !slices.Contains(sel.Methods, k.Method) {
		return false
	}
	return sel.URI == "" || strings.HasPrefix(sel.URI, k.Params) || strings.HasPrefix(k.Params, sel.URI)
}

// memoryCache is the in-memory [Store] of [NewMemory].
type memoryCache struct {
	maxEntries int // > 0

	mu    sync.Mutex
	m     map[Key]Entry // guarded by mu; created lazily
	order []Key         // guarded by mu; the keys of m, in the order they were stored
}

// NewMemory returns an empty in-memory [Store] holding at most
// maxEntries entries (zero or negative means 4096): when it is full,
// expired entries are dropped first, then the oldest stored. It is safe
// for concurrent use and may be shared by several clients.
func NewMemory(maxEntries int) Store {
	if maxEntries <= 0 {
		maxEntries = 4096
	}
	return &memoryCache{maxEntries: maxEntries}
}

// LoadResult implements [Store].
func (c *memoryCache) LoadResult(_ context.Context, key Key) (Entry, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e, ok, nil
}

// StoreResult implements [Store].
func (c *memoryCache) StoreResult(_ context.Context, key Key, e Entry) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[Key]Entry)
	}
	limit := c.maxEntries
	if _, ok := c.m[key]; !ok && len(c.m) >= limit {
		c.evictLocked(limit)
	}
	if _, ok := c.m[key]; !ok {
		c.order = append(c.order, key)
	}
	c.m[key] = e
	return nil
}

// evictLocked makes room for one entry.
func (c *memoryCache) evictLocked(limit int) {
	now := time.Now()
	for k, e := range c.m {
		if !now.Before(e.Expires) {
			delete(c.m, k)
		}
	}
	c.compactLocked()
	for len(c.m) >= limit && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		delete(c.m, k)
	}
}

// compactLocked drops from the order the keys no longer in the map, so
// that it holds each stored key once: a key deleted and stored again
// counts from its new store, and invalidations cannot grow the order.
func (c *memoryCache) compactLocked() {
	live := c.order[:0]
	for _, k := range c.order {
		if _, ok := c.m[k]; ok {
			live = append(live, k)
		}
	}
	clear(c.order[len(live):]) // let the dropped keys' strings go
	c.order = live
}

// DeleteResults implements [Store].
func (c *memoryCache) DeleteResults(_ context.Context, sel Selector) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(c.m)
	for k := range c.m {
		if sel.Match(k) {
			delete(c.m, k)
		}
	}
	if len(c.m) < n {
		c.compactLocked()
	}
	return nil
}
