package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/negotiation"
)

// EraRecord is what an [EraCache] remembers about one server: the era and
// protocol version the last successful negotiation settled on and, for a
// modern server, its server/discover result, so that a reconnect that
// skips the probe knows the server as well as a full one does.
type EraRecord struct {
	// Era is negotiation.EraModern or negotiation.EraLegacy.
	Era negotiation.Era `json:"era"`
	// Version is the negotiated protocol version.
	Version string `json:"version"`
	// Discover is the server/discover result of a modern server, as the
	// JSON text the server sent; "" for a legacy one. A reconnect takes
	// the cached modern verdict only while Discover is fresh (DiscoveredAt
	// plus its ttlMs) and probes (discovers) again once it is stale or
	// absent.
	Discover string `json:"discover,omitempty"`
	// DiscoveredAt is when Discover was received.
	DiscoveredAt time.Time `json:"discoveredAt,omitzero"`
}

// freshDiscover returns the record's discover result when it is still
// fresh at now, else nil.
func (rec EraRecord) freshDiscover(now time.Time) (*negotiation.DiscoverResult, time.Time) {
	if rec.Era != negotiation.EraModern || rec.Discover == "" {
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

// EraCache remembers negotiation verdicts per server, so a reconnect can
// skip the probe. The key is the full endpoint URL for [Dial] and the
// command line for a command transport (see [WithServerKey] to choose it).
//
// Implementations must be safe for concurrent use; no method may block for
// long. A record that proves wrong is replaced (or deleted) by the client.
type EraCache interface {
	// LoadEra returns the record for key and whether there was one.
	LoadEra(key string) (EraRecord, bool)
	// StoreEra records rec for key, replacing any previous record.
	StoreEra(key string, rec EraRecord)
	// DeleteEra forgets key. Deleting a missing key is not an error.
	DeleteEra(key string)
}

// MemoryEraCache returns a new, empty in-memory [EraCache]; it is safe for
// concurrent use.
func MemoryEraCache() EraCache { return &memoryEraCache{} }

// memoryEraCache is the [EraCache] of [MemoryEraCache].
type memoryEraCache struct {
	mu sync.Mutex
	m  map[string]EraRecord // guarded by mu; created lazily
}

// LoadEra implements [EraCache].
func (c *memoryEraCache) LoadEra(key string) (EraRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, ok
}

// StoreEra implements [EraCache].
func (c *memoryEraCache) StoreEra(key string, rec EraRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]EraRecord)
	}
	c.m[key] = rec
}

// DeleteEra implements [EraCache].
func (c *memoryEraCache) DeleteEra(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// fileEraCache is the [EraCache] of [NewFileEraCache].
type fileEraCache struct {
	path string
	mu   sync.Mutex // guards the file
}

// NewFileEraCache returns an [EraCache] persisted as one JSON file at
// path, so verdicts survive restarts. Every store rewrites the file
// atomically (temporary file + rename). It is safe for concurrent use
// within one process; two processes sharing a file may lose each other's
// latest writes, which only costs a probe. A missing or unreadable file
// reads as empty.
func NewFileEraCache(path string) EraCache { return &fileEraCache{path: path} }

func (c *fileEraCache) readLocked() map[string]EraRecord {
	m := map[string]EraRecord{}
	b, err := os.ReadFile(c.path)
	if err != nil {
		return m
	}
	if json.Unmarshal(b, &m) != nil {
		return map[string]EraRecord{}
	}
	return m
}

func (c *fileEraCache) writeLocked(m map[string]EraRecord) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(c.path)
	if err := os.MkdirAll(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".eracache-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), c.path); err != nil {
		return fmt.Errorf("writing era cache: %v", err)
	}
	return nil
}

// LoadEra implements [EraCache].
func (c *fileEraCache) LoadEra(key string) (EraRecord, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.readLocked()[key]
	return r, ok
}

// StoreEra implements [EraCache]. A failure to write is ignored: the cache
// is an optimization.
func (c *fileEraCache) StoreEra(key string, rec EraRecord) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.readLocked()
	m[key] = rec
	_ = c.writeLocked(m)
}

// DeleteEra implements [EraCache].
func (c *fileEraCache) DeleteEra(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.readLocked()
	if _, ok := m[key]; !ok {
		return
	}
	delete(m, key)
	_ = c.writeLocked(m)
}
