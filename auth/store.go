package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
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
	t, ok := s.tokens[key]
	if !ok {
		return nil, nil
	}
	t.Scopes = append([]string(nil), t.Scopes...)
	return &t, nil
}

// SaveToken implements [TokenStore].
func (s *MemoryStore) SaveToken(_ context.Context, key string, tok *Token) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tok == nil {
		delete(s.tokens, key)
		return nil
	}
	if s.tokens == nil {
		s.tokens = map[string]Token{}
	}
	t := *tok
	t.Scopes = append([]string(nil), t.Scopes...)
	s.tokens[key] = t
	return nil
}

// LoadClient implements [TokenStore].
func (s *MemoryStore) LoadClient(_ context.Context, issuer string) (*ClientRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.clients[issuer]
	if !ok {
		return nil, nil
	}
	r.RedirectURIs = append([]string(nil), r.RedirectURIs...)
	return &r, nil
}

// SaveClient implements [TokenStore].
func (s *MemoryStore) SaveClient(_ context.Context, issuer string, reg *ClientRegistration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if reg == nil {
		delete(s.clients, issuer)
		return nil
	}
	if s.clients == nil {
		s.clients = map[string]ClientRegistration{}
	}
	r := *reg
	r.RedirectURIs = append([]string(nil), r.RedirectURIs...)
	s.clients[issuer] = r
	return nil
}

// Lock implements [Locker] with a channel-based lock, so a waiter gives up
// when ctx ends.
func (s *MemoryStore) Lock(ctx context.Context) (func(), error) {
	s.mu.Lock()
	if s.lock == nil {
		s.lock = make(chan struct{}, 1)
	}
	l := s.lock
	s.mu.Unlock()
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// FileStore is a [TokenStore] in one JSON file, readable and writable only
// by its owner (mode 0600). Every write replaces the file atomically (a
// temporary file in the same directory, then rename), and every load
// re-reads it, so processes sharing the file see each other's tokens.
// [FileStore.Lock] takes an exclusive lock on Path+".lock" with flock(2)
// on Unix systems; elsewhere it only serializes within the process (see
// the package's build-tagged lock files).
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
	dir := filepath.Dir(s.Path)
	f, err := os.CreateTemp(dir, filepath.Base(s.Path)+".tmp*")
	if err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := f.Chmod(0o600); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	if _, err := f.Write(b); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	if err := os.Rename(tmp, s.Path); err != nil {
		return fmt.Errorf("auth: writing token store: %v", err)
	}
	ok = true
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

// LoadToken implements [TokenStore].
func (s *FileStore) LoadToken(_ context.Context, key string) (*Token, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	t, ok := d.Tokens[key]
	if !ok {
		return nil, nil
	}
	return &t, nil
}

// SaveToken implements [TokenStore]. It does not lock the file against
// other processes; callers that read-modify-write hold [FileStore.Lock].
func (s *FileStore) SaveToken(_ context.Context, key string, tok *Token) error {
	return s.update(func(d *fileData) {
		if tok == nil {
			delete(d.Tokens, key)
			return
		}
		if d.Tokens == nil {
			d.Tokens = map[string]Token{}
		}
		d.Tokens[key] = *tok
	})
}

// LoadClient implements [TokenStore].
func (s *FileStore) LoadClient(_ context.Context, issuer string) (*ClientRegistration, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.read()
	if err != nil {
		return nil, err
	}
	r, ok := d.Clients[issuer]
	if !ok {
		return nil, nil
	}
	return &r, nil
}

// SaveClient implements [TokenStore].
func (s *FileStore) SaveClient(_ context.Context, issuer string, reg *ClientRegistration) error {
	return s.update(func(d *fileData) {
		if reg == nil {
			delete(d.Clients, issuer)
			return
		}
		if d.Clients == nil {
			d.Clients = map[string]ClientRegistration{}
		}
		d.Clients[issuer] = *reg
	})
}

// Lock implements [Locker]: it serializes within the process, then takes
// the cross-process file lock (see lockFile), both bounded by ctx.
func (s *FileStore) Lock(ctx context.Context) (func(), error) {
	s.mu.Lock()
	if s.lock == nil {
		s.lock = make(chan struct{}, 1)
	}
	l := s.lock
	s.mu.Unlock()
	select {
	case l <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	release, err := lockFile(ctx, s.Path+".lock")
	if err != nil {
		<-l
		return nil, err
	}
	return func() { release(); <-l }, nil
}
