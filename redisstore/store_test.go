package redisstore_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/redisstore"
)

var testKey = bytes.Repeat([]byte{7}, 32)

func newStore(t testing.TB, rdb redis.UniversalClient, o redisstore.Options) *redisstore.Store {
	t.Helper()
	if o.EncryptionKey == nil && !o.Plaintext {
		o.EncryptionKey = testKey
	}
	s, err := redisstore.New(rdb, o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewRefusesPlainUnlessAsked(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer rdb.Close()
	if _, err := redisstore.New(rdb, redisstore.Options{}); err == nil {
		t.Error("New without a key or Plaintext = nil error")
	}
	if _, err := redisstore.New(rdb, redisstore.Options{EncryptionKey: []byte("short")}); err == nil {
		t.Error("New with a 5-byte key = nil error")
	}
	if _, err := redisstore.New(rdb, redisstore.Options{Plaintext: true}); err != nil {
		t.Errorf("New with Plaintext = %v", err)
	}
}

// TestTokensSealed: tokens and registrations round-trip, Redis holds
// neither secret in the clear (and no key names the server), a value
// does not open under another key or at another name, and no error
// quotes a token.
func TestTokensSealed(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{Prefix: "app1:"})
	tok := &auth.Token{AccessToken: "AT-SECRET", RefreshToken: "RT-SECRET", Expiry: time.Now().Add(time.Hour).Round(0), Issuer: "https://as.example"}
	mustOK(t, s.SaveToken(ctx, "https://mcp.example/alice", tok))
	mustOK(t, s.SaveClient(ctx, "https://as.example", &auth.ClientRegistration{ClientID: "id", ClientSecret: "CS-SECRET"}))
	got, err := s.LoadToken(ctx, "https://mcp.example/alice")
	if err != nil || got == nil || got.AccessToken != "AT-SECRET" || got.RefreshToken != "RT-SECRET" || !got.Expiry.Equal(tok.Expiry) {
		t.Fatalf("LoadToken = %v, %v", got, err)
	}
	if reg, err := s.LoadClient(ctx, "https://as.example"); err != nil || reg == nil || reg.ClientSecret != "CS-SECRET" {
		t.Fatalf("LoadClient = %v, %v", reg, err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	mustOK(t, err)
	for _, k := range keys {
		if !strings.HasPrefix(k, "app1:") || strings.Contains(k, "mcp.example") || strings.Contains(k, "as.example") {
			t.Errorf("key %q: want the prefix and a hash", k)
		}
		v, _ := rdb.Get(ctx, k).Bytes()
		if bytes.Contains(v, []byte("SECRET")) {
			t.Errorf("value of %s holds a secret in the clear", k)
		}
	}
	if got, _ := s.LoadToken(ctx, "https://mcp.example/bob"); got != nil {
		t.Errorf("another key's token = %v, want none", got)
	}

	other := newStore(t, rdb, redisstore.Options{Prefix: "app1:", EncryptionKey: bytes.Repeat([]byte{8}, 32)})
	_, err = other.LoadToken(ctx, "https://mcp.example/alice")
	if !errors.Is(err, redisstore.ErrCorrupt) || strings.Contains(err.Error(), "SECRET") {
		t.Errorf("LoadToken under another key = %v, want ErrCorrupt without the token", err)
	}
	if !errors.Is(err, auth.ErrCorruptValue) {
		t.Errorf("LoadToken under another key = %v, want it to match auth.ErrCorruptValue (the auth.Client replaces it)", err)
	}
	// An auth.Client on that store takes the token as none (its next
	// authorization replaces it), rather than failing every request.
	ac, err := auth.New(auth.Config{ServerURL: "https://mcp.example/alice", ClientID: "id", Store: other})
	mustOK(t, err)
	if tok, err := ac.Token(ctx); tok != "" || err != nil {
		t.Errorf("Token with a stored token sealed under another key = %q, %v; want none and no error", tok, err)
	}
	// A sealed value copied to another user's key does not open there.
	aliceKeys, _ := rdb.Keys(ctx, "app1:tok:*").Result()
	aliceVal, _ := rdb.Get(ctx, aliceKeys[0]).Bytes()
	mustOK(t, s.SaveToken(ctx, "https://mcp.example/bob", tok))
	for _, k := range must(rdb.Keys(ctx, "app1:tok:*").Result()) {
		if k != aliceKeys[0] {
			mustOK(t, rdb.Set(ctx, k, aliceVal, 0).Err())
		}
	}
	if _, err := s.LoadToken(ctx, "https://mcp.example/bob"); err == nil {
		t.Error("a value moved to another key opened")
	}

	plain := newStore(t, rdb, redisstore.Options{Prefix: "app1:", Plaintext: true})
	if _, err := plain.LoadToken(ctx, "https://mcp.example/alice"); !errors.Is(err, redisstore.ErrCorrupt) {
		t.Errorf("a plain store reading a sealed token = %v, want ErrCorrupt", err)
	}
	mustOK(t, plain.SaveToken(ctx, "k", tok))
	if got, err := plain.LoadToken(ctx, "k"); err != nil || got.RefreshToken != "RT-SECRET" {
		t.Errorf("plain round trip = %v, %v", got, err)
	}
	mustOK(t, s.SaveToken(ctx, "https://mcp.example/alice", nil))
	if got, err := s.LoadToken(ctx, "https://mcp.example/alice"); got != nil || err != nil {
		t.Errorf("deleted token = %v, %v", got, err)
	}
}

// TestLease: SET NX with an owner; a second owner waits; renew and
// release only by the owner; a lease not renewed expires after LeaseTTL.
func TestLease(t *testing.T) {
	r := startRedis(t)
	ctx := testCtx(t)
	s := newStore(t, r.client(t), redisstore.Options{LeaseTTL: 300 * time.Millisecond})
	ttl, err := s.AcquireLease(ctx, "k", "a")
	if err != nil || ttl != 300*time.Millisecond {
		t.Fatalf("AcquireLease = %v, %v", ttl, err)
	}
	if err := s.RenewLease(ctx, "k", "b"); !errors.Is(err, auth.ErrLeaseLost) {
		t.Errorf("RenewLease by another owner = %v, want ErrLeaseLost", err)
	}
	mustOK(t, s.ReleaseLease(ctx, "k", "b")) // does nothing
	if err := s.RenewLease(ctx, "k", "a"); err != nil {
		t.Errorf("RenewLease by the owner = %v", err)
	}
	start := time.Now()
	if _, err := s.AcquireLease(ctx, "k", "b"); err != nil {
		t.Fatal(err)
	}
	if waited := time.Since(start); waited < 200*time.Millisecond {
		t.Errorf("b took the lease after %v, before a's expired", waited)
	}
	if err := s.RenewLease(ctx, "k", "a"); !errors.Is(err, auth.ErrLeaseLost) {
		t.Errorf("RenewLease by the expired owner = %v, want ErrLeaseLost", err)
	}
	mustOK(t, s.ReleaseLease(ctx, "k", "a")) // b's lease stays
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := s.AcquireLease(cctx, "k", "c"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("AcquireLease while b holds it = %v, want DeadlineExceeded", err)
	}
	mustOK(t, s.ReleaseLease(ctx, "k", "b"))
	if _, err := s.AcquireLease(ctx, "k", "c"); err != nil {
		t.Errorf("AcquireLease after release = %v", err)
	}
}

// TestResults: ttlMs is the Redis TTL, private entries are sealed and
// partitioned, a too large entry is not stored, and DeleteResults removes
// what the selector names (by method, partition, resource URI) only.
func TestResults(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{MaxEntrySize: 100})
	exp := time.Now().Add(90 * time.Second)
	pub := cache.Key{Server: "srv", Partition: "public", Method: "tools/list"}
	priv := cache.Key{Server: "srv", Partition: "private:token:a", Method: "resources/read", Params: "file:///dir/x"}
	privB := cache.Key{Server: "srv", Partition: "private:token:b", Method: "resources/read", Params: "file:///dir/x"}
	other := cache.Key{Server: "srv", Partition: "public", Method: "resources/read", Params: "file:///other"}
	mustOK(t, s.StoreResult(ctx, pub, cache.Entry{Result: []byte(`{"tools":[]}`), Expires: exp, Scope: "public"}))
	mustOK(t, s.StoreResult(ctx, priv, cache.Entry{Result: []byte(`{"PRIVATE":1}`), Expires: exp, Scope: "private"}))
	mustOK(t, s.StoreResult(ctx, other, cache.Entry{Result: []byte(`{}`), Expires: exp, Scope: "public"}))
	mustOK(t, s.StoreResult(ctx, cache.Key{Server: "srv", Method: "big"}, cache.Entry{Result: bytes.Repeat([]byte(" "), 101), Expires: exp, Scope: "public"}))
	if _, ok, _ := s.LoadResult(ctx, cache.Key{Server: "srv", Method: "big"}); ok {
		t.Error("an entry over MaxEntrySize was stored")
	}
	e, ok, err := s.LoadResult(ctx, priv)
	if !ok || err != nil || string(e.Result) != `{"PRIVATE":1}` || !e.Expires.Equal(exp.Round(0)) {
		t.Fatalf("LoadResult(private) = %+v, %v, %v", e, ok, err)
	}
	if _, ok, _ := s.LoadResult(ctx, privB); ok {
		t.Error("a private entry served to another partition")
	}
	keys, _ := rdb.Keys(ctx, "conduit:c:*").Result()
	if len(keys) != 3 {
		t.Fatalf("entries in Redis = %d, want 3", len(keys))
	}
	for _, k := range keys {
		v, _ := rdb.Get(ctx, k).Bytes()
		if bytes.Contains(v, []byte("PRIVATE")) {
			t.Errorf("private entry %s stored in the clear", k)
		}
		pttl, _ := rdb.PTTL(ctx, k).Result()
		if pttl <= 80*time.Second || pttl > 90*time.Second {
			t.Errorf("PTTL(%s) = %v, want the entry's ttl (about 90s)", k, pttl)
		}
	}
	mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "srv", Methods: []string{"resources/read"}, URI: "file:///dir/"}))
	if _, ok, _ := s.LoadResult(ctx, priv); ok {
		t.Error("the entry under the updated URI survived")
	}
	for _, k := range []cache.Key{pub, other} {
		if _, ok, _ := s.LoadResult(ctx, k); !ok {
			t.Errorf("entry %+v deleted, want kept", k)
		}
	}
	mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "srv", Partition: "private:token:a"}))
	if _, ok, _ := s.LoadResult(ctx, pub); !ok {
		t.Error("a public entry deleted by a partition's selector")
	}
	mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "srv"}))
	if keys, _ := rdb.Keys(ctx, "conduit:c:*").Result(); len(keys) != 0 {
		t.Errorf("entries left after deleting the server's: %v", keys)
	}
}

func TestEras(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	key := "stdio:server --token=ARG-SECRET"
	rec := cache.EraRecord{Era: negotiation.EraLegacy, Version: "2025-06-18"}
	mustOK(t, s.StoreEra(ctx, key, rec))
	if got, ok, err := s.LoadEra(ctx, key); !ok || err != nil || got != rec {
		t.Errorf("LoadEra = %+v, %v, %v", got, ok, err)
	}
	keys, _ := rdb.Keys(ctx, "*").Result()
	for _, k := range keys {
		v, _ := rdb.Get(ctx, k).Bytes()
		if strings.Contains(k+string(v), "ARG-SECRET") {
			t.Errorf("key %s holds the command line's argument", k)
		}
		if ttl, _ := rdb.TTL(ctx, k).Result(); ttl <= 0 {
			t.Errorf("era record %s has no TTL", k)
		}
	}
	mustOK(t, s.DeleteEra(ctx, key))
	if _, ok, _ := s.LoadEra(ctx, key); ok {
		t.Error("deleted record loads")
	}
}

// TestRedisDownErrors: with Redis gone, every method returns a
// *redisstore.Error promptly, naming no token.
func TestRedisDownErrors(t *testing.T) {
	r := startRedis(t)
	rdb := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	defer rdb.Close()
	s := newStore(t, rdb, redisstore.Options{})
	r.stop()
	ctx := testCtx(t)
	tok := &auth.Token{AccessToken: "AT-SECRET", RefreshToken: "RT-SECRET"}
	errs := []error{
		s.SaveToken(ctx, "k", tok),
		func() error { _, err := s.LoadToken(ctx, "k"); return err }(),
		func() error { _, err := s.AcquireLease(ctx, "k", "o"); return err }(),
		func() error { _, _, err := s.LoadResult(ctx, cache.Key{Server: "s"}); return err }(),
		s.StoreResult(ctx, cache.Key{Server: "s"}, cache.Entry{Result: []byte("{}"), Expires: time.Now().Add(time.Hour)}),
		s.DeleteResults(ctx, cache.Selector{Server: "s"}),
		func() error { _, _, err := s.LoadEra(ctx, "k"); return err }(),
	}
	for i, err := range errs {
		if _, ok := errors.AsType[*redisstore.Error](err); !ok {
			t.Errorf("call %d with Redis down = %v, want a *redisstore.Error", i, err)
			continue
		}
		if strings.Contains(err.Error(), "SECRET") {
			t.Errorf("error quotes a secret: %v", err)
		}
	}
}

func must[V any](v V, _ error) V { return v }

func mustOK(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestHugeValueNotRead: a token, a registration or a cached result that
// another writer made huge (here 40 MiB of valid JSON, far more than
// this version writes) is refused as ErrCorrupt after a bounded read,
// rather than read whole, and decoded, on every load.
func TestHugeValueNotRead(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{Plaintext: true})
	huge := func(field string) []byte {
		return []byte(`{"` + field + `":"` + strings.Repeat("a", 40<<20) + `"}`)
	}
	mustOK(t, rdb.Set(ctx, "conduit:tok:"+sha("k"), huge("access_token"), 0).Err())
	if tok, err := s.LoadToken(ctx, "k"); !errors.Is(err, redisstore.ErrCorrupt) {
		t.Errorf("LoadToken of a 40 MiB token = %d bytes, %v; want ErrCorrupt", len(must(tok, err).AccessToken), err)
	}
	mustOK(t, rdb.Set(ctx, "conduit:reg:"+sha("https://as.example"), huge("client_id"), 0).Err())
	if reg, err := s.LoadClient(ctx, "https://as.example"); !errors.Is(err, redisstore.ErrCorrupt) {
		t.Errorf("LoadClient of a 40 MiB registration = %v, %v; want ErrCorrupt", reg != nil, err)
	}
	k := cache.Key{Server: "srv", Method: "tools/list"}
	mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{}`), Expires: time.Now().Add(time.Hour), Scope: "public"}))
	entries := must(rdb.Keys(ctx, "conduit:c:*").Result())
	if len(entries) != 1 {
		t.Fatalf("entries = %q, want 1", entries)
	}
	mustOK(t, rdb.Set(ctx, entries[0], huge("r"), 0).Err())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e, ok, err := s.LoadResult(ctx, k)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, redisstore.ErrCorrupt) {
		t.Errorf("LoadResult of a 40 MiB entry = %d bytes, %v, %v; want ErrCorrupt", len(e.Result), ok, err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 20<<20 {
		t.Errorf("LoadResult of a 40 MiB entry allocated %d MiB, want a bounded read (the default bound is 6 MiB)", alloc>>20)
	}
}

// TestPrivateEntryInTheClearRefused: with an EncryptionKey every private
// result is sealed, so a private partition's entry found in the clear
// was not written by a replica holding the key (a plaintext replica, or
// a forger with access to Redis): it is refused as ErrCorrupt, not served
// as that user's result.
func TestPrivateEntryInTheClearRefused(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	k := cache.Key{Server: "srv", Partition: "private:alice", Method: "resources/read", Params: "file:///salary"}
	mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{"contents":[]}`), Expires: time.Now().Add(time.Hour), Scope: "private"}))
	entries := must(rdb.Keys(ctx, "conduit:c:*").Result())
	if len(entries) != 1 {
		t.Fatalf("entries = %q, want 1", entries)
	}
	forged := `{"r":{"contents":[{"uri":"file:///salary","text":"forged"}]},"e":"` + time.Now().Add(time.Hour).UTC().Format(time.RFC3339) + `","s":"private"}`
	mustOK(t, rdb.Set(ctx, entries[0], forged, 0).Err())
	if e, ok, err := s.LoadResult(ctx, k); !errors.Is(err, redisstore.ErrCorrupt) {
		t.Errorf("LoadResult of a private entry in the clear = %s, %v, %v; want ErrCorrupt", e.Result, ok, err)
	}
	// A public entry is in the clear by design.
	pub := cache.Key{Server: "srv", Partition: "public", Method: "tools/list"}
	mustOK(t, s.StoreResult(ctx, pub, cache.Entry{Result: []byte(`{"tools":[]}`), Expires: time.Now().Add(time.Hour), Scope: "public"}))
	if e, ok, err := s.LoadResult(ctx, pub); err != nil || !ok || string(e.Result) != `{"tools":[]}` {
		t.Errorf("LoadResult of a public entry = %s, %v, %v", e.Result, ok, err)
	}
}
