package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"

	"github.com/conduitmcp/conduit/internal/atomicfile"
)

// TokenStore keeps tokens (keyed by the canonical server URL) and client
// registrations (keyed by authorization server issuer). Implementations
// must be safe for concurrent use; methods may block (file or network
// I/O) and are bounded by ctx. Load methods return (nil, nil) when there
// is nothing stored. Saving nil deletes the entry.
//
// A store shared by several processes should also implement [Locker], so
// that refreshes of a rotating refresh token are serialized across them.
type TokenStore interface {
	// LoadToken returns the token stored for key.
	LoadToken(ctx context.Context, key string) (*Token, error)
	// SaveToken stores tok for key, replacing any previous token; nil
	// deletes it.
	SaveToken(ctx context.Context, key string, tok *Token) error
	// LoadClient returns the registration stored for issuer.
	LoadClient(ctx context.Context, issuer string) (*ClientRegistration, error)
	// SaveClient stores reg for issuer; nil deletes it.
	SaveClient(ctx context.Context, issuer string, reg *ClientRegistration) error
}

// Locker is implemented by stores that can be shared: Lock takes an
// exclusive lock on the store (across processes for [FileStore]), blocking
// until it is held or ctx ends, and returns the function that releases it.
// The Client holds the lock while it re-reads the store, refreshes a token
// and saves the result.
type Locker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// MemoryStore is a [TokenStore] in memory. The zero value is ready to use.
// Several Clients sharing one MemoryStore serialize refreshes through its
// [MemoryStore.Lock].
type MemoryStore struct {
	mu      sync.Mutex // guards tokens, clients
	tokens  map[string]Token
	clients map[string]ClientRegistration
	lock    chan struct{} // created lazily under mu; a one-slot semaphore
}

var (
	_ TokenStore = (*MemoryStore)(nil)
	_ Locker     = (*MemoryStore)(nil)
	_ TokenStore = (*FileStore)(nil)
	_ Locker     = (*FileStore)(nil)
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

// Lock implements [Locker] with a channel-based lock, so a waiter gives up
// when ctx ends.
func (s *MemoryStore) Lock(ctx context.Context) (func(), error) {
	l, err := acquire(ctx, &s.mu, &s.lock)
	if err != nil {
		return nil, err
	}
	return func() { <-l }, nil
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

// acquire takes the one-slot semaphore *sem, which it creates under mu
// when it is nil, or gives up when ctx ends. It returns the semaphore, to
// be released by receiving from it.
func acquire(ctx context.Context, mu *sync.Mutex, sem *chan struct{}) (chan struct{}, error) {
	mu.Lock()
	if *sem == nil {
		*sem = make(chan struct{}, 1)
	}
	l := *sem
	mu.Unlock()
	select {
	case l <- struct{}{}:
		return l, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// FileStore is a [TokenStore] in one JSON file, readable and writable only
// by its owner (mode 0600; on Windows an ACL for the current user alone). Every write replaces the file atomically (a
// temporary file in the same directory, then rename), and every load
// re-reads it, so processes sharing the file see each other's tokens.
// [FileStore.Lock] takes an exclusive lock on Path+".lock" with flock(2)
// on Unix systems and LockFileEx on Windows; elsewhere it only serializes
// within the process (see the package's build-tagged lock files).
type FileStore struct {
	// Path is the file. Its directory must exist.
	Path string

	mu sync.Mutex // serializes read-modify-write within this process
	// lock is a one-slot semaphore for Lock within this process (the
	// file lock is per open file description, so the process must not
	// take it twice); created lazily under mu.
	lock chan struct{}
}

// fileData is the file's content.
type fileData struct {
	Tokens  map[string]Token              `json:"tokens,omitempty"`
	Clients map[string]ClientRegistration `json:"clients,omitempty"`
}

func (s *FileStore) read() (*fileData, error) {
	var d fileData
	b, err := os.ReadFile(s.Path)
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

func (s *FileStore) update(fn func(d *fileData)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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

// SaveToken implements [TokenStore]. It does not lock the file against
// other processes; callers that read-modify-write hold [FileStore.Lock].
func (s *FileStore) SaveToken(_ context.Context, key string, tok *Token) error {
	return s.update(func(d *fileData) { putEntry(&d.Tokens, key, tok, cloneToken) })
}

// LoadClient implements [TokenStore].
func (s *FileStore) LoadClient(_ context.Context, issuer string) (*ClientRegistration, error) {
	return load(s, func(d *fileData) *ClientRegistration { return getEntry(d.Clients, issuer, cloneClient) })
}

// SaveClient implements [TokenStore].
func (s *FileStore) SaveClient(_ context.Context, issuer string, reg *ClientRegistration) error {
	return s.update(func(d *fileData) { putEntry(&d.Clients, issuer, reg, cloneClient) })
}

// Lock implements [Locker]: it serializes within the process, then takes
// the cross-process file lock (see lockFile), both bounded by ctx.
func (s *FileStore) Lock(ctx context.Context) (func(), error) {
	l, err := acquire(ctx, &s.mu, &s.lock)
	if err != nil {
		return nil, err
	}
	release, err := lockFile(ctx, s.Path+".lock")
	if err != nil {
		<-l
		return nil, err
	}
	return func() { release(); <-l }, nil
}
