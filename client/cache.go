package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"time"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/internal/storehealth"

	"github.com/conduitmcp/conduit/protocol"
)

// Cache partitions.
const (
	partitionPublic  = "public"
	partitionPrivate = "private:"
)

// cacheHints are the CacheableResult fields of a modern result.
type cacheHints struct {
	ResultType string          `json:"resultType"`
	TTLMs      json.RawMessage `json:"ttlMs"`
	CacheScope string          `json:"cacheScope"`
}

// readCacheHints returns the freshness lifetime and scope of raw. Missing
// or malformed ttlMs means 0 (not cacheable); a scope other than "public"
// means private.
func readCacheHints(raw json.RawMessage) (time.Duration, string) {
	var h cacheHints
	if json.Unmarshal(raw, &h) != nil {
		return 0, protocol.CacheScopePrivate
	}
	scope := protocol.CacheScopePrivate
	if h.CacheScope == protocol.CacheScopePublic {
		scope = protocol.CacheScopePublic
	}
	if h.ResultType != "" && h.ResultType != protocol.ResultTypeComplete {
		return 0, scope
	}
	var ms float64
	if json.Unmarshal(h.TTLMs, &ms) != nil || ms <= 0 || ms != math.Trunc(ms) {
		return 0, scope
	}
	const maxTTL = 365 * 24 * time.Hour // bounds the conversion below
	if ms >= float64(maxTTL/time.Millisecond) {
		return maxTTL, scope
	}
	return time.Duration(ms) * time.Millisecond, scope
}

// authIdentity names the authorization context for private cache
// entries (see [Auth].Tokens): "" without credentials; the Identity() of
// the token source if it has one; else a hash of its current token, or
// of the Authorization header the Header hook sets; each followed by a
// hash of the client's own headers, if it has any, which may carry
// credentials too. It reports false when the context cannot be named (no
// private entry is then stored or served).
func (c *Client) authIdentity(ctx context.Context) (string, bool) {
	id, ok := c.credentialIdentity(ctx)
	if !ok || c.headerID == "" {
		return id, ok
	}
	if id == "" {
		return c.headerID, true
	}
	return id + "+" + c.headerID, true
}

// credentialIdentity is authIdentity without the client's own headers.
func (c *Client) credentialIdentity(ctx context.Context) (string, bool) {
	if id, ok := c.cfg.credentials.(interface{ Identity() string }); ok {
		return id.Identity(), true
	}
	a := c.cfg.auth
	if a.Tokens != nil {
		tok, err := a.Tokens.Token(ctx)
		switch {
		case err != nil:
			// The request will not be sent either; nothing names whose
			// entries it could be served.
			return "", false
		case tok == "":
			return "unauthenticated", true // sent without credentials
		}
		return tokenIdentity(tok), true
	}
	if a.Header == nil {
		return "", true
	}
	// Credentials set by a hook (an *auth.Client, a DPoP-bound token):
	// hash the Authorization header it sets on the endpoint.
	if c.cfg.endpoint != "" {
		if req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.endpoint, nil); err == nil {
			if a.Header(ctx, req) == nil {
				if v := req.Header.Get("Authorization"); v != "" {
					return tokenIdentity(v), true
				}
			}
		}
	}
	return "", false
}

// headersIdentity names the headers a client adds to every request
// (WithHeaders, then WithCallHeaders among the call defaults) by a hash
// of them, or "" when there are none.
func headersIdentity(hs ...http.Header) string {
	if !slices.ContainsFunc(hs, func(h http.Header) bool { return len(h) > 0 }) {
		return ""
	}
	h := sha256.New()
	empty := true
	for i, hdr := range hs {
		for _, name := range slices.Sorted(maps.Keys(hdr)) {
			empty = false
			fmt.Fprintf(h, "%d %d:%s %d", i, len(name), name, len(hdr[name]))
			for _, v := range hdr[name] {
				fmt.Fprintf(h, " %d:%s", len(v), v)
			}
		}
	}
	if empty {
		return ""
	}
	return "headers:" + hex.EncodeToString(h.Sum(nil)[:12])
}

// tokenIdentity names an authorization context by a hash of its
// credential.
func tokenIdentity(cred string) string {
	sum := sha256.Sum256([]byte(cred))
	return "token:" + hex.EncodeToString(sum[:12])
}

// identity is the authorization context of one cached call, as
// authIdentity named it: ok is false when it could not be named.
type identity struct {
	name string
	ok   bool
}

// cacheLookup returns a fresh entry for method+params, public first, then
// private in the authorization context id.
func (c *Client) cacheLookup(ctx context.Context, id identity, method, params string) (json.RawMessage, bool) {
	now := c.cfg.now()
	parts := []string{partitionPublic}
	if id.ok {
		parts = append(parts, partitionPrivate+id.name)
	}
	for _, part := range parts {
		started := time.Now()
		e, ok, err := c.cfg.cache.LoadResult(ctx, cache.Key{Server: c.key, Partition: part, Method: method, Params: params})
		if !c.cacheHealth.Report(c.cfg.logger, "cache", started, err) {
			return nil, false
		}
		if ok && now.Before(e.Expires) {
			return e.Result, true
		}
	}
	return nil, false
}

// cacheStore records raw if its hints make it cacheable; a private result
// goes to the partition of id.
func (c *Client) cacheStore(ctx context.Context, id identity, method, params string, raw json.RawMessage, received time.Time) {
	ttl, scope := readCacheHints(raw)
	if ttl <= 0 {
		return
	}
	part := partitionPublic
	if scope != protocol.CacheScopePublic {
		if !id.ok {
			return
		}
		part = partitionPrivate + id.name
	}
	started := time.Now()
	err := c.cfg.cache.StoreResult(ctx, cache.Key{Server: c.key, Partition: part, Method: method, Params: params},
		cache.Entry{Result: append(json.RawMessage(nil), raw...), Expires: received.Add(ttl), Scope: scope})
	c.cacheHealth.Report(c.cfg.logger, "cache", started, err)
}

// invalidate drops cached results that notification method (with params)
// makes stale, and the per-connection tool metadata on a tools change.
func (c *Client) invalidate(method string, params json.RawMessage) {
	switch method {
	case protocol.NotificationToolsListChanged:
		c.tools.reset()
	}
	if c.cfg.cache == nil {
		return
	}
	sel := cache.Selector{Server: c.key}
	switch method {
	case protocol.NotificationToolsListChanged:
		sel.Methods = []string{protocol.MethodToolsList}
	case protocol.NotificationPromptsListChanged:
		sel.Methods = []string{protocol.MethodPromptsList}
	case protocol.NotificationResourcesListChanged:
		sel.Methods = []string{protocol.MethodResourcesList, protocol.MethodResourcesTemplateList}
	case protocol.NotificationResourcesUpdated:
		var p protocol.ResourceUpdatedParams
		if json.Unmarshal(params, &p) != nil || p.URI == "" {
			return
		}
		sel.Methods, sel.URI = []string{protocol.MethodResourcesRead}, p.URI
	default:
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	started := time.Now()
	c.cacheHealth.Report(c.cfg.logger, "cache", started, c.cfg.cache.DeleteResults(ctx, sel))
}

// storeTimeout bounds a store call that no caller's context bounds (an
// invalidation, the era record written at Close).
const storeTimeout = 5 * time.Second

// storeHealth turns a failing cache or era store into no caching: the
// call goes on as a miss, and the failure is logged once per outage (see
// storehealth.Health).
type storeHealth = storehealth.Health
