package redisstore

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
)

// Options configures a [Store]. The zero value is usable only with
// Plaintext set or an EncryptionKey.
type Options struct {
	// Prefix starts every key. "" means "conduit:".
	Prefix string
	// EncryptionKey seals tokens, client registrations and private
	// cached results with AES-GCM: 16, 24 or 32 bytes (AES-128, -192,
	// -256). Every replica needs the same key.
	EncryptionKey []byte
	// Plaintext stores tokens and registrations unsealed. It must be set
	// to use a Store without an EncryptionKey, and is ignored with one.
	Plaintext bool
	// LeaseTTL is how long a refresh lease lasts unless its holder renews
	// it (it does every third of it): the longest a replica waits for a
	// holder that died. 0 means 10 s; it is rounded up to a millisecond.
	LeaseTTL time.Duration
	// LeasePoll is how often a replica waiting for a lease tries again.
	// 0 means 10 ms.
	LeasePoll time.Duration
	// MaxEntrySize bounds a cached result: a larger one is not stored.
	// 0 means 1 MiB; negative means no bound.
	MaxEntrySize int
	// EraTTL is how long an era record lives after it is written. 0 means
	// 30 days.
	EraTTL time.Duration
}

// Defaults of [Options].
const (
	DefaultPrefix       = "conduit:"
	DefaultLeaseTTL     = 10 * time.Second
	DefaultLeasePoll    = 10 * time.Millisecond
	DefaultMaxEntrySize = 1 << 20
	DefaultEraTTL       = 30 * 24 * time.Hour
)

// Store is a token store, a refresh leaser, a response cache and an era
// cache in Redis: an [auth.TokenStore] and [auth.RefreshLeaser] for
// auth.Config.Store, a [cache.Store] for client.WithCache and a
// [cache.EraStore] for client.WithEraCache.
type Store struct {
	rdb  redis.UniversalClient // never nil
	o    Options               // copied and defaulted by New
	aead cipher.AEAD           // nil when plaintext
}

var (
	_ auth.TokenStore    = (*Store)(nil)
	_ auth.RefreshLeaser = (*Store)(nil)
	_ cache.Store        = (*Store)(nil)
	_ cache.EraStore     = (*Store)(nil)
)

// New returns a Store on rdb. It does no I/O. It fails when rdb is nil,
// when the EncryptionKey is not an AES key, or when there is neither a key
// nor Plaintext.
func New(rdb redis.UniversalClient, o Options) (*Store, error) {
	if rdb == nil {
		return nil, errors.New("redisstore: nil redis client")
	}
	s := &Store{rdb: rdb, o: o}
	s.o.EncryptionKey = nil // not kept: the cipher holds what it needs
	switch {
	case len(o.EncryptionKey) > 0:
		block, err := aes.NewCipher(o.EncryptionKey)
		if err != nil {
			return nil, fmt.Errorf("redisstore: encryption key: %v", err)
		}
		if s.aead, err = cipher.NewGCM(block); err != nil {
			return nil, fmt.Errorf("redisstore: encryption key: %v", err)
		}
	case !o.Plaintext:
		return nil, errors.New("redisstore: no EncryptionKey: set Options.Plaintext to store tokens in the clear")
	}
	if s.o.Prefix == "" {
		s.o.Prefix = DefaultPrefix
	}
	if s.o.LeaseTTL <= 0 {
		s.o.LeaseTTL = DefaultLeaseTTL
	}
	s.o.LeaseTTL = s.o.LeaseTTL.Round(time.Millisecond)
	if s.o.LeaseTTL < time.Millisecond {
		s.o.LeaseTTL = time.Millisecond
	}
	if s.o.LeasePoll <= 0 {
		s.o.LeasePoll = DefaultLeasePoll
	}
	if s.o.MaxEntrySize == 0 {
		s.o.MaxEntrySize = DefaultMaxEntrySize
	}
	if s.o.EraTTL <= 0 {
		s.o.EraTTL = DefaultEraTTL
	}
	return s, nil
}

// Error reports a failing Redis call.
type Error struct {
	// Op is the store operation, e.g. "load token".
	Op string
	// Err is the Redis client's error (or [ErrCorrupt]).
	Err error
}

func (e *Error) Error() string { return "redisstore: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ErrCorrupt reports a stored value that does not open (another
// EncryptionKey, a value moved between keys, a plain value where sealed
// ones are expected), does not decode, or is larger than any this
// version writes (it is not read). It matches [auth.ErrCorruptValue]: an
// [auth.Client] takes such a token or registration as none, and the next
// authorization replaces it.
var ErrCorrupt error = corruptError{}

type corruptError struct{}

func (corruptError) Error() string { return "redisstore: stored value does not open or decode" }

func (corruptError) Is(target error) bool { return target == auth.ErrCorruptValue }

func opErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Err: err}
}

// hash names a subject in a key.
func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Sealed values start with sealedMark; plain values are JSON.
const sealedMark = 0x01

// seal encrypts plain for the key name (its additional data), or returns
// it as it is without a cipher.
func (s *Store) seal(name string, plain []byte) []byte {
	if s.aead == nil {
		return plain
	}
	out := make([]byte, 1+s.aead.NonceSize(), 1+s.aead.NonceSize()+len(plain)+s.aead.Overhead())
	out[0] = sealedMark
	rand.Read(out[1:])
	return s.aead.Seal(out, out[1:], plain, []byte(name))
}

// open reverses seal. A store with a key refuses plain values.
func (s *Store) open(name string, v []byte) ([]byte, error) {
	if s.aead == nil {
		if len(v) > 0 && v[0] == sealedMark {
			return nil, ErrCorrupt
		}
		return v, nil
	}
	ns := s.aead.NonceSize()
	if len(v) < 1+ns || v[0] != sealedMark {
		return nil, ErrCorrupt
	}
	plain, err := s.aead.Open(nil, v[1:1+ns], v[1+ns:], []byte(name))
	if err != nil {
		return nil, ErrCorrupt
	}
	return plain, nil
}

// get returns the value of name, nil when there is none (or it is
// empty). A value longer than max bytes is not read: it is an error
// matching [ErrCorrupt] (this version writes none so large), so that a
// value another writer made huge costs a bounded read on every load. A
// negative max reads any value.
func (s *Store) get(ctx context.Context, op, name string, max int) ([]byte, error) {
	var v []byte
	var err error
	if max < 0 {
		v, err = s.rdb.Get(ctx, name).Bytes()
	} else {
		// GETRANGE's end is inclusive: max+1 bytes tell a value over max.
		v, err = s.rdb.GetRange(ctx, name, 0, int64(max)).Bytes()
	}
	if errors.Is(err, redis.Nil) || err == nil && len(v) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, opErr(op, err)
	}
	if max >= 0 && len(v) > max {
		return nil, opErr(op, ErrCorrupt)
	}
	return v, nil
}

// maxRecord bounds a stored token or client registration, far above any
// this Store writes: each holds what a few responses of at most 1 MiB
// gave it (x/oauth2 reads no more of a token response, auth no more of a
// metadata or registration response), which its JSON encoding makes at
// most six times longer (a byte escaped as \u00XX).
const maxRecord = 32 << 20

// maxEntry bounds a stored cached result: larger than any this Store
// writes, a result of at most [Options.MaxEntrySize] bytes that its JSON
// encoding makes at most six times longer, with its expiry, scope and
// seal; negative (no MaxEntrySize, or one too large to multiply) when
// there is no bound.
func (s *Store) maxEntry() int {
	if s.o.MaxEntrySize < 0 || s.o.MaxEntrySize > (math.MaxInt-1<<10)/6 {
		return -1
	}
	return 6*s.o.MaxEntrySize + 1<<10
}
