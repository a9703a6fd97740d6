package cache_test

import (
	"fmt"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/protocol"
)

func ExampleNewMemory() {
	store := cache.NewMemory(0)
	key := cache.Key{Server: "s", Partition: "public", Method: protocol.MethodToolsList}
	store.StoreResult(key, cache.Entry{Result: []byte(`{"tools":[]}`), Scope: protocol.CacheScopePublic})
	e, ok := store.LoadResult(key)
	fmt.Println(string(e.Result), ok)
	// Output: {"tools":[]} true
}
