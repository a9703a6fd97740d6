package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/internal/atomicfile"
)

// TokenStore keeps tokens (keyed by the canonical server URL) and client
// registrations (keyed by authorization server issuer). Implementations
// must be safe for concurrent use; methods may block (file or network
// I/O) and are bounded by ctx. Load methods return (nil, nil) when there
// is nothing stored. Saving nil deletes the entry.
//
// A store shared by several Clients or processes should also implement
// [RefreshLeaser], so that refreshes of a rotating refresh token are
// serialized across them.
type TokenStore interface {
	// LoadToken returns the token stored for key: nil when there is
	// none, and an error matching [ErrCorruptValue] for one that does not
	// open or decode (the Client then takes it as none and replaces it).
	LoadToken(ctx context.Context, key string) (*Token, error)
	// SaveToken stores tok for key, replacing any previous token; nil
	// deletes it.
	SaveToken(ctx context.Context, key string, tok *Token) error
	// LoadClient returns the registration stored for issuer (nil, or
	// [ErrCorruptValue], as LoadToken).
	LoadClient(ctx context.Context, issuer string) (*ClientRegistration, error)
	// SaveClient stores reg for issuer; nil deletes it.
	SaveClient(ctx context.Context, issuer string, reg *ClientRegistration) error
}

// MemoryStore is a [TokenStore] in memory. The zero value is ready to use.
// Several Clients sharing one MemoryStore serialize refreshes of a key
// through its [RefreshLeaser] methods.
type MemoryStore struct {
	mu      sync.Mutex // guards tokens, clients
	tokens  map[string]Token
	clients map[string]ClientRegistration
	leases  leaseTable
}

var (
	_ TokenStore    = (*MemoryStore)(nil)
	_ RefreshLeaser = (*MemoryStore)(nil)
	_ TokenStore    = (*FileStore)(nil)
	_ RefreshLeaser = (*FileStore)(nil)
)

// LoadToken implements [TokenStore].
func (s *MemoryStore) LoadToken(_ context.Context, key string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return getEntry(s.tokens, key, cloneToken), nil
}

// SaveToken implements [TokenStore].
func (s *MemoryStore) SaveToken(_ context.Context, key string, tok *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	putEntry(&s.tokens, key, tok, cloneToken)
	return nil
}

// LoadClient implements [TokenStore].
func (s *MemoryStore) LoadClient(_ context.Context, issuer string) (*ClientRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return getEntry(s.clients, issuer, cloneClient), nil
}

// SaveClient implements [TokenStore].
func (s *MemoryStore) SaveClient(_ context.Context, issuer string, reg *ClientRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	putEntry(&s.clients, issuer, reg, cloneClient)
	return nil
}

// AcquireLease implements [RefreshLeaser] with a channel-based lock per
// key, so a waiter gives up when ctx ends. The lease lasts until released
// (ttl 0): its holders live in this process.
func (s *MemoryStore) AcquireLease(ctx context.Context, key, owner string) (time.Duration, error) {
	return 0, s.leases.acquire(ctx, key, owner, nil)
}

// RenewLease implements [RefreshLeaser].
func (s *MemoryStore) RenewLease(_ context.Context, key, owner string) error {
	return s.leases.renew(key, owner)
}

// ReleaseLease implements [RefreshLeaser].
func (s *MemoryStore) ReleaseLease(_ context.Context, key, owner string) error {
	s.leases.release(key, owner)
	return nil
}

// cloneToken and cloneClient copy the slices a caller could modify, so
// that a store never shares them with its callers.
func cloneToken(t Token) Token {
	t.Scopes = append([]string(nil), t.Scopes...)
	return t
}

func cloneClient(r ClientRegistration) ClientRegistration {
	r.RedirectURIs = append([]string(nil), r.RedirectURIs...)
	return r
}

// getEntry returns a copy of m[key], or nil when there is none.
func getEntry[V any](m map[string]V, key string, clone func(V) V) *V {
	v, ok := m[key]
	if !ok {
		return nil
	}
	v = clone(v)
	return &v
}

// putEntry stores a copy of *v as (*m)[key], creating the map if needed;
// a nil v deletes the entry.
func putEntry[V any](m *map[string]V, key string, v *V, clone func(V) V) {
	if v == nil {
		delete(*m, key)
		return
	}
	if *m == nil {
		*m = map[string]V{}
	}
	(*m)[key] = clone(*v)
}

// FileStore is a [TokenStore] in one JSON file, readable and writable only
// by its owner (mode 0600; on Windows an ACL for the current user alone). Every write replaces the file atomically (a
// temporary file in the same directory, then rename), and every load
// re-reads it, so processes sharing the file see each other's tokens.
// Every write holds an exclusive lock on Path+".lock" across processes;
// the refresh lease of a key ([FileStore.AcquireLease]) is an exclusive
// lock on a file of its own beside Path, named by a hash of the key. The
// locks are flock(2) on Unix systems and LockFileEx on Windows (see the
// package's build-tagged lock files); the system releases them when
// their holder's process ends.
type FileStore struct {
	// Path is the file. Its directory must exist.
	Path string

	mu sync.Mutex // serializes read-modify-write within this process
	// leases serializes the leases of one key within the process before
	// the file lock (a polled lock) is taken.
	leases leaseTable
}

// fileData is the file's content.
type fileData struct {
	Tokens  map[string]Token              `json:"tokens,omitempty"`
	Clients map[string]ClientRegistration `json:"clients,omitempty"`
}

func (s *FileStore) read() (*fileData, error) {
	var d fileData
	b, err := atomicfile.Read(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return &d, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: reading token store: %v", err)
	}
	if len(b) == 0 {
		return &d, nil
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("auth: token store %s is corrupt: %v", s.Path, err)
	}
	return &d, nil
}

func (s *FileStore) write(d *fileData) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.Path, b); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	return nil
}

func (s *FileStore) update(ctx context.Context, fn func(d *fileData)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	unlock, err := lockFile(ctx, s.Path+".lock")
	if err != nil {
		return err
	}
	defer unlock()
	d, err := s.read()
	if err != nil {
		return err
	}
	fn(d)
	return s.write(d)
}

// load reads the file and returns what get picks from it.
func load[V any](s *FileStore, get func(d *fileData) *V) (*V, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	return get(d), nil
}

// LoadToken implements [TokenStore].
func (s *FileStore) LoadToken(_ context.Context, key string) (*Token, error) {
	return load(s, func(d *fileData) *Token { return getEntry(d.Tokens, key, cloneToken) })
}

// SaveToken implements [TokenStore]. The write holds the file's lock
// against other processes; a refresh (read, refresh, save) holds the
// key's lease besides.
func (s *FileStore) SaveToken(ctx context.Context, key string, tok *Token) error {
	return s.update(ctx, func(d *fileData) { putEntry(&d.Tokens, key, tok, cloneToken) })
}

// LoadClient implements [TokenStore].
func (s *FileStore) LoadClient(_ context.Context, issuer string) (*ClientRegistration, error) {
	return load(s, func(d *fileData) *ClientRegistration { return getEntry(d.Clients, issuer, cloneClient) })
}

// SaveClient implements [TokenStore].
func (s *FileStore) SaveClient(ctx context.Context, issuer string, reg *ClientRegistration) error {
	return s.update(ctx, func(d *fileData) { putEntry(&d.Clients, issuer, reg, cloneClient) })
}

// AcquireLease implements [RefreshLeaser]: it serializes within the
// process, then takes the cross-process lock of the key's lease file
// (Path+".lease-"+a hash of key), both bounded by ctx. The lease lasts
// until released or until the holding process ends (ttl 0).
func (s *FileStore) AcquireLease(ctx context.Context, key, owner string) (time.Duration, error) {
	return 0, s.leases.acquire(ctx, key, owner, func(ctx context.Context) (func(), error) {
		return lockFile(ctx, s.leasePath(key))
	})
}

// RenewLease implements [RefreshLeaser].
func (s *FileStore) RenewLease(_ context.Context, key, owner string) error {
	return s.leases.renew(key, owner)
}

// ReleaseLease implements [RefreshLeaser].
func (s *FileStore) ReleaseLease(_ context.Context, key, owner string) error {
	s.leases.release(key, owner)
	return nil
}

// leasePath is the lock file of key's lease: named by a hash, so that
// neither the key nor its length shows in the directory.
func (s *FileStore) leasePath(key string) string {
	sum := sha256.Sum256([]byte(key))
	return s.Path + ".lease-" + hex.EncodeToString(sum[:16])
}
