package redisstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/redisstore"
)

// TestCorruptIndexFieldDoesNotBlockInvalidation: an index field that is
// not "partition\x00params" (not written by this version) does not make
// every invalidation of its method fail: it goes, with its entry, and the
// other entries are invalidated as the selector says.
func TestCorruptIndexFieldDoesNotBlockInvalidation(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	exp := time.Now().Add(time.Minute)
	k := cache.Key{Server: "srv", Partition: "public", Method: "tools/list"}
	mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{"tools":[]}`), Expires: exp, Scope: "public"}))
	idx := "conduit:ci:{" + sha("srv") + "}:tools/list"
	stray := "conduit:c:{" + sha("srv") + "}:stray"
	mustOK(t, rdb.Set(ctx, stray, "x", time.Minute).Err())
	mustOK(t, rdb.HSet(ctx, idx, "no-separator", stray).Err())
	if err := s.DeleteResults(ctx, cache.Selector{Server: "srv", Methods: []string{"tools/list"}}); err != nil {
		t.Fatalf("DeleteResults with a corrupt index field = %v", err)
	}
	if _, ok, _ := s.LoadResult(ctx, k); ok {
		t.Error("the entry survived its invalidation")
	}
	if n, _ := rdb.Exists(ctx, stray, idx).Result(); n != 0 {
		t.Errorf("%d of the corrupt field's entry and the index left, want none", n)
	}
}

// TestIndexValueNotAnEntry: an index value naming a key that is not one
// of its server's entries (here the token) is not deleted by an
// invalidation; the field goes, and the entries of the index are
// invalidated.
func TestIndexValueNotAnEntry(t *testing.T) {
	rdb := startRedis(t).client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	k := cache.Key{Server: "srv", Partition: "public", Method: "tools/list"}
	mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{}`), Expires: time.Now().Add(time.Minute), Scope: "public"}))
	mustOK(t, s.SaveToken(ctx, "https://mcp.example", &auth.Token{AccessToken: "at"}))
	idx := "conduit:ci:{" + sha("srv") + "}:tools/list"
	mustOK(t, rdb.HSet(ctx, idx, "public\x00other", "conduit:tok:"+sha("https://mcp.example")).Err())
	if err := s.DeleteResults(ctx, cache.Selector{Server: "srv"}); err != nil {
		t.Fatalf("DeleteResults with an index value that is no entry = %v", err)
	}
	if _, ok, _ := s.LoadResult(ctx, k); ok {
		t.Error("the entry survived its invalidation")
	}
	if tok, err := s.LoadToken(ctx, "https://mcp.example"); err != nil || tok == nil {
		t.Errorf("LoadToken after the invalidation = %v, %v; want the token kept", tok, err)
	}
	if n, _ := rdb.Exists(ctx, idx).Result(); n != 0 {
		t.Error("the index is left with the field")
	}
}

// indexFields counts the members of the server's index of method, of
// either kind (a hash of this store's older versions, a sorted set).
func indexFields(t *testing.T, rdb redis.UniversalClient, server, method string) int64 {
	t.Helper()
	ctx := testCtx(t)
	var n int64
	for _, kind := range []string{"ci", "cz"} {
		key := "conduit:" + kind + ":{" + sha(server) + "}:" + method
		switch typ, _ := rdb.Type(ctx, key).Result(); typ {
		case "hash":
			n += rdb.HLen(ctx, key).Val()
		case "zset":
			n += rdb.ZCard(ctx, key).Val()
		}
	}
	return n
}

// TestIndexBoundedByLiveEntries: a server's index holds the entries that
// live, not every entry stored while traffic kept the index alive: 600
// results of distinct params, 10 every 20 ms with a TTL of 200 ms, leave
// an index of about the 100 that live, not 600.
func TestIndexBoundedByLiveEntries(t *testing.T) {
	rdb := startRedis(t).client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	var last cache.Key
	for round := range 60 {
		time.Sleep(20 * time.Millisecond)
		for i := range 10 {
			last = cache.Key{Server: "srv", Partition: "public", Method: "resources/read", Params: fmt.Sprintf("r%d-%d", round, i)}
			mustOK(t, s.StoreResult(ctx, last, cache.Entry{Result: []byte(`{}`), Expires: time.Now().Add(200 * time.Millisecond), Scope: "public"}))
		}
	}
	if n := indexFields(t, rdb, "srv", "resources/read"); n > 300 {
		t.Errorf("the index holds %d entries after 600 stored, about 100 of them live; want about 100", n)
	}
	// The live entries are still invalidated through it.
	if _, ok, _ := s.LoadResult(ctx, last); !ok {
		t.Skip("the last entry expired before it was checked (a slow machine)")
	}
	mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "srv", URI: last.Params}))
	if _, ok, _ := s.LoadResult(ctx, last); ok {
		t.Error("a live entry survived its invalidation")
	}
}

// TestCorruptIndexMemberDoesNotBlockInvalidation: a member of the index
// that is not "hash\x00partition\x00params" (not written by this version)
// does not make an invalidation fail: it goes, and the entries of the
// index are invalidated; a member whose hash part is not hexadecimal
// deletes no key.
func TestCorruptIndexMemberDoesNotBlockInvalidation(t *testing.T) {
	rdb := startRedis(t).client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{})
	k := cache.Key{Server: "srv", Partition: "public", Method: "tools/list"}
	mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{"tools":[]}`), Expires: time.Now().Add(time.Minute), Scope: "public"}))
	idx := "conduit:cz:{" + sha("srv") + "}:tools/list"
	keep := "conduit:c:{" + sha("srv") + "}:x:y"
	mustOK(t, rdb.Set(ctx, keep, "x", time.Minute).Err())
	far := float64(time.Now().Add(time.Hour).UnixMilli())
	mustOK(t, rdb.ZAdd(ctx, idx, redis.Z{Score: far, Member: "no-separator"}, redis.Z{Score: far, Member: "x:y\x00public\x00"}).Err())
	if err := s.DeleteResults(ctx, cache.Selector{Server: "srv", Methods: []string{"tools/list"}}); err != nil {
		t.Fatalf("DeleteResults with corrupt index members = %v", err)
	}
	if _, ok, _ := s.LoadResult(ctx, k); ok {
		t.Error("the entry survived its invalidation")
	}
	if n, _ := rdb.Exists(ctx, idx).Result(); n != 0 {
		t.Errorf("the index is left with members: %v", rdb.ZRange(ctx, idx, 0, -1).Val())
	}
	if n, _ := rdb.Exists(ctx, keep).Result(); n != 1 {
		t.Error("a member whose hash is not hexadecimal deleted a key")
	}
}
