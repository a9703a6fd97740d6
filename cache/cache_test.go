package cache_test

import (
	"context"
	"testing"

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
