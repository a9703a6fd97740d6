package redisstore_test

import (
	"testing"
	"time"

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
	mustOK(t, rdb.Set(ctx, "conduit:c:stray", "x", time.Minute).Err())
	mustOK(t, rdb.HSet(ctx, idx, "no-separator", "conduit:c:stray").Err())
	if err := s.DeleteResults(ctx, cache.Selector{Server: "srv", Methods: []string{"tools/list"}}); err != nil {
		t.Fatalf("DeleteResults with a corrupt index field = %v", err)
	}
	if _, ok, _ := s.LoadResult(ctx, k); ok {
		t.Error("the entry survived its invalidation")
	}
	if n, _ := rdb.Exists(ctx, "conduit:c:stray", idx).Result(); n != 0 {
		t.Errorf("%d of the corrupt field's entry and the index left, want none", n)
	}
}
