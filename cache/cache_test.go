package cache_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/cache"
)

// TestSelectorMatch pins what an invalidation removes: one server's
// entries, narrowed by partition, methods and a resource URI related by
// prefix either way.
func TestSelectorMatch(t *testing.T) {
	k := cache.Key{Server: "s", Partition: "private:a", Method: "resources/read", Params: "file:///dir/x"}
	for _, tt := range []struct {
		sel  cache.Selector
		want bool
	}{
		{cache.Selector{Server: "s"}, true},
		{cache.Selector{Server: "t"}, false},
		{cache.Selector{Server: "s", Partition: "private:a"}, true},
		{cache.Selector{Server: "s", Partition: "public"}, false},
		{cache.Selector{Server: "s", Methods: []string{"tools/list", "resources/read"}}, true},
		{cache.Selector{Server: "s", Methods: []string{"tools/list"}}, false},
		{cache.Selector{Server: "s", URI: "file:///dir/x"}, true},
		{cache.Selector{Server: "s", URI: "file:///dir/"}, true},
		{cache.Selector{Server: "s", URI: "file:///dir/x/y"}, true},
		{cache.Selector{Server: "s", URI: "file:///other"}, false},
	} {
		if got := tt.sel.Match(k); got != tt.want {
			t.Errorf("%+v.Match(%+v) = %v, want %v", tt.sel, k, got, tt.want)
		}
	}
}

// TestMemoryDeleteResults: DeleteResults removes what the selector
// matches and nothing else.
func TestMemoryDeleteResults(t *testing.T) {
	ctx := context.Background()
	s := cache.NewMemory(0)
	keep := cache.Key{Server: "s", Partition: "public", Method: "prompts/list"}
	drop := cache.Key{Server: "s", Partition: "public", Method: "tools/list"}
	other := cache.Key{Server: "t", Partition: "public", Method: "tools/list"}
	for _, k := range []cache.Key{keep, drop, other} {
		mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte("{}")}))
	}
	mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "s", Methods: []string{"tools/list"}}))
	for k, want := range map[cache.Key]bool{keep: true, drop: false, other: true} {
		if _, ok, _ := s.LoadResult(ctx, k); ok != want {
			t.Errorf("after DeleteResults, LoadResult(%+v) found = %v, want %v", k, ok, want)
		}
	}
}

// TestMemoryEvictsOldestAfterDelete: a key deleted (an invalidation) and
// stored again counts from its new store, so a full cache evicts the
// entry stored first, not the one stored last; and a flood of
// invalidations and re-stores of one key does not make the eviction
// order forget which key is oldest.
func TestMemoryEvictsOldestAfterDelete(t *testing.T) {
	ctx := context.Background()
	s := cache.NewMemory(2)
	fresh := cache.Entry{Result: []byte("{}"), Expires: time.Now().Add(time.Hour)}
	a := cache.Key{Server: "s", Partition: "public", Method: "tools/list"}
	b := cache.Key{Server: "s", Partition: "public", Method: "prompts/list"}
	c := cache.Key{Server: "s", Partition: "public", Method: "resources/list"}
	for range 1000 { // list_changed, then a listing stores the page again
		mustOK(t, s.StoreResult(ctx, a, fresh))
		mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: "s", Methods: []string{a.Method}}))
	}
	mustOK(t, s.StoreResult(ctx, b, fresh))
	mustOK(t, s.StoreResult(ctx, a, fresh)) // a is now the newest
	mustOK(t, s.StoreResult(ctx, c, fresh)) // full: the oldest, b, goes
	for k, want := range map[cache.Key]bool{a: true, b: false, c: true} {
		if _, ok, _ := s.LoadResult(ctx, k); ok != want {
			t.Errorf("LoadResult(%s) found = %v, want %v", k.Method, ok, want)
		}
	}
}

// TestMemoryDefaultBound: NewMemory with zero or a negative bound holds
// 4096 entries, then evicts the oldest.
func TestMemoryDefaultBound(t *testing.T) {
	ctx := context.Background()
	fresh := cache.Entry{Result: []byte("{}"), Expires: time.Now().Add(time.Hour)}
	key := func(i int) cache.Key {
		return cache.Key{Server: "s", Partition: "public", Method: "tools/list", Params: strconv.Itoa(i)}
	}
	for _, max := range []int{0, -1} {
		s := cache.NewMemory(max)
		for i := range 4097 {
			mustOK(t, s.StoreResult(ctx, key(i), fresh))
		}
		for i, want := range map[int]bool{0: false, 1: true, 4096: true} {
			if _, ok, _ := s.LoadResult(ctx, key(i)); ok != want {
				t.Errorf("NewMemory(%d) after 4097 stores: LoadResult(entry %d) found = %v, want %v", max, i, ok, want)
			}
		}
	}
}
