package client

import (
	"encoding/json"
	"time"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/negotiation"
)

// freshDiscover returns rec's discover result when it is still fresh at
// now, and when it expires; nil when it is stale, absent or unreadable,
// or dated after now: a result that cannot have been received yet (a
// replica's clock ahead of ours, a hostile record) would otherwise stay
// fresh past its ttlMs, as long as its date is far.
func freshDiscover(rec cache.EraRecord, now time.Time) (*negotiation.DiscoverResult, time.Time) {
	if rec.Era != negotiation.EraModern || rec.Discover == "" || rec.DiscoveredAt.After(now) {
		return nil, time.Time{}
	}
	res, err := negotiation.ParseDiscoverResult(json.RawMessage(rec.Discover))
	if err != nil {
		return nil, time.Time{}
	}
	expires := rec.DiscoveredAt.Add(msTTL(res.TTLMs))
	if !now.Before(expires) {
		return nil, time.Time{}
	}
	return res, expires
}

// MemoryEraCache returns a new, empty in-memory era store for
// [WithEraCache] (a [cache.NewMemoryEraStore]); it is safe for concurrent
// use and may be shared by several clients.
func MemoryEraCache() cache.EraStore { return cache.NewMemoryEraStore() }

// NewFileEraCache returns an era store for [WithEraCache] persisted as
// one JSON file at path (a [cache.NewFileEraStore]), so verdicts survive
// restarts; records are keyed by a hash of the server key, never the key
// (a command line's arguments may carry tokens). It is safe for
// concurrent use within one process; two processes sharing a file may
// lose each other's latest writes, which only costs a probe. A missing or
// unreadable file reads as empty.
func NewFileEraCache(path string) cache.EraStore { return cache.NewFileEraStore(path) }
