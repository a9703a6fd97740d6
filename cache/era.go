package cache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/internal/atomicfile"
	"github.com/conduitmcp/conduit/negotiation"
)

// EraRecord is what an [EraStore] remembers about one server: the era and
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
	// absent, or when DiscoveredAt is after the reconnect's now.
	Discover string `json:"discover,omitempty"`
	// DiscoveredAt is when Discover was received.
	DiscoveredAt time.Time `json:"discoveredAt,omitzero"`
}

// EraStore remembers negotiation verdicts per server, so a reconnect can
// skip the probe (client.WithEraCache). The key is the full endpoint URL
// for client.Dial and, for client.Connect, the key of a transport with a
// ServerKey method (the command line of a transport.Stdio, which may hold
// secrets: a store that keeps keys outside the process keeps a hash of
// them, as [NewFileEraStore] does); see client.WithEraCache.
//
// Implementations must be safe for concurrent use; every method may block
// on I/O and is bounded by ctx. An error means the store could not serve
// the call: the client then negotiates without it. A record that proves
// wrong is replaced (or deleted) by the client.
type EraStore interface {
	// LoadEra returns the record for key and whether there was one.
	LoadEra(ctx context.Context, key string) (EraRecord, bool, error)
	// StoreEra records rec for key, replacing any previous record.
	StoreEra(ctx context.Context, key string, rec EraRecord) error
	// DeleteEra forgets key. Deleting a missing key is not an error.
	DeleteEra(ctx context.Context, key string) error
}

// NewMemoryEraStore returns a new, empty in-memory [EraStore]; it is safe
// for concurrent use and may be shared by several clients.
func NewMemoryEraStore() EraStore { return &memoryEras{} }

// memoryEras is the [EraStore] of [NewMemoryEraStore].
type memoryEras struct {
	mu sync.Mutex
	m  map[string]EraRecord // guarded by mu; created lazily
}

var (
	_ EraStore = (*memoryEras)(nil)
	_ EraStore = (*fileEras)(nil)
)

// LoadEra implements [EraStore].
func (c *memoryEras) LoadEra(_ context.Context, key string) (EraRecord, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.m[key]
	return r, ok, nil
}

// StoreEra implements [EraStore].
func (c *memoryEras) StoreEra(_ context.Context, key string, rec EraRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[string]EraRecord)
	}
	c.m[key] = rec
	return nil
}

// DeleteEra implements [EraStore].
func (c *memoryEras) DeleteEra(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
	return nil
}

// HashKey returns the name under which a store that keeps keys outside
// the process records key: "sha256:" and the hex SHA-256 of key, so that
// a command line's secrets are not written out.
func HashKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hashPrefix + hex.EncodeToString(sum[:])
}

const hashPrefix = "sha256:"

// fileEras is the [EraStore] of [NewFileEraStore].
type fileEras struct {
	path string
	mu   sync.Mutex // guards the file
}

// NewFileEraStore returns an [EraStore] persisted as one JSON file at
// path, so verdicts survive restarts. Records are keyed by [HashKey] of
// their key, never the key itself (a stdio server's command line may
// carry tokens); a file written by an older version, keyed in plain text,
// loses those entries at the next write. Every store rewrites the file
// atomically (temporary file + rename, mode 0600), creating its directory
// (mode 0700) if needed. It is safe for concurrent use within one
// process; two processes sharing a file may lose each other's latest
// writes, which only costs a probe. A missing or unreadable file reads as
// empty; a failure to write is returned.
func NewFileEraStore(path string) EraStore { return &fileEras{path: path} }

func (c *fileEras) readLocked() map[string]EraRecord {
	m := map[string]EraRecord{}
	b, err := atomicfile.Read(c.path)
	if err != nil {
		return m
	}
	if json.Unmarshal(b, &m) != nil || m == nil { // "null" leaves m nil
		return map[string]EraRecord{}
	}
	return m
}

func (c *fileEras) writeLocked(m map[string]EraRecord) error {
	for k := range m {
		if !strings.HasPrefix(k, hashPrefix) {
			delete(m, k) // a plain-text key of an older version
		}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(c.path), 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cache: writing era cache: %v", err)
	}
	if err := atomicfile.Write(c.path, b); err != nil {
		return fmt.Errorf("cache: writing era cache: %v", err)
	}
	return nil
}

// LoadEra implements [EraStore].
func (c *fileEras) LoadEra(_ context.Context, key string) (EraRecord, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.readLocked()[HashKey(key)]
	return r, ok, nil
}

// StoreEra implements [EraStore].
func (c *fileEras) StoreEra(_ context.Context, key string, rec EraRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.readLocked()
	m[HashKey(key)] = rec
	return c.writeLocked(m)
}

// DeleteEra implements [EraStore].
func (c *fileEras) DeleteEra(_ context.Context, key string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := c.readLocked()
	if _, ok := m[HashKey(key)]; !ok {
		return nil
	}
	delete(m, HashKey(key))
	return c.writeLocked(m)
}
