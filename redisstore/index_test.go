package redisstore_test

import (
	"testing"
	"time"

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
