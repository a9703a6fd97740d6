package cache_test

import (
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/protocol"
)

func ExampleNewMemory() {
	ctx := context.Background()
	store := cache.NewMemory(0)
	key := cache.Key{Server: "s", Partition: "public", Method: protocol.MethodToolsList}
	store.StoreResult(ctx, key, cache.Entry{Result: []byte(`{"tools":[]}`), Scope: protocol.CacheScopePublic})
	e, ok, err := store.LoadResult(ctx, key)
	fmt.Println(string(e.Result), ok, err)
	// Output: {"tools":[]} true <nil>
}
