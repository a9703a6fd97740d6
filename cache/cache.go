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
// # Concurrency
//
// Every store here is safe for concurrent use and may be shared by
// several clients.
package cache

import (
	"encoding/json"
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
// safe for concurrent use and must not block for long; every method is
// idempotent. A store may evict entries at any time; it may keep entries
// past Expires (the client checks freshness itself).
type Store interface {
	// LoadResult returns the entry for key and whether there was one.
	LoadResult(key Key) (Entry, bool)
	// StoreResult records e for key, replacing any previous entry.
	StoreResult(key Key, e Entry)
	// DeleteResults removes every entry for which match returns true.
	DeleteResults(match func(Key) bool)
}

// memoryCache is the in-memory [Store] of [NewMemory].
type memoryCache struct {
	maxEntries int // > 0

	mu    sync.Mutex
	m     map[Key]Entry // guarded by mu; created lazily
	order []Key         // guarded by mu; insertion order, may hold stale keys
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
func (c *memoryCache) LoadResult(key Key) (Entry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[key]
	return e, ok
}

// StoreResult implements [Store].
func (c *memoryCache) StoreResult(key Key, e Entry) {
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
}

// evictLocked makes room for one entry.
func (c *memoryCache) evictLocked(limit int) {
	now := time.Now()
	for k, e := range c.m {
		if !now.Before(e.Expires) {
			delete(c.m, k)
		}
	}
	for len(c.m) >= limit && len(c.order) > 0 {
		k := c.order[0]
		c.order = c.order[1:]
		delete(c.m, k)
	}
	// Compact the order slice of keys no longer present.
	live := c.order[:0]
	for _, k := range c.order {
		if _, ok := c.m[k]; ok {
			live = append(live, k)
		}
	}
	c.order = live
}

// DeleteResults implements [Store].
func (c *memoryCache) DeleteResults(match func(Key) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if match(k) {
			delete(c.m, k)
		}
	}
}
