package cache

import (
	"context"
	"testing"
	"time"
)

// TestMemoryOrderBounded: the eviction order of a memory store holds only
// keys it stores, however often a server's notifications invalidate an
// entry that is then stored again.
func TestMemoryOrderBounded(t *testing.T) {
	ctx := context.Background()
	c := NewMemory(8).(*memoryCache)
	k := Key{Server: "s", Partition: "public", Method: "tools/list"}
	for range 10000 {
		if err := c.StoreResult(ctx, k, Entry{Expires: time.Now().Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		if err := c.DeleteResults(ctx, Selector{Server: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.order); n > 8 {
		t.Errorf("after 10000 stores and deletes of one key, the eviction order holds %d keys, want at most 8", n)
	}
}
