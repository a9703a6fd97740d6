// Package redisstore shares what a fleet of Conduit replicas must share
// through Redis (or Valkey): the OAuth tokens and client registrations of
// an auth.Client, the refresh lease that serializes refreshes of one
// token across replicas, the response cache of client.WithCache and the
// era cache of client.WithEraCache. One [Store] serves all four:
//
//	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{"redis:6379"}})
//	store, err := redisstore.New(rdb, redisstore.Options{EncryptionKey: key})
//	ac, err := auth.New(auth.Config{ServerURL: url, Store: store, ...})
//	c, err := client.Dial(ctx, url, client.WithAuth(client.Auth{Tokens: ac, Authorize: ac.Authorize}),
//		client.WithCache(store), client.WithEraCache(store))
//
// # Keys
//
// Every key starts with [Options.Prefix]. Keys name their subject by a
// SHA-256 hash (a stdio server's command line may hold secrets):
//
//	<prefix>tok:<hash of the server URL>         a token (sealed)
//	<prefix>reg:<hash of the issuer>             a client registration (sealed)
//	<prefix>lease:<hash of the server URL>       the refresh lease: its owner
//	<prefix>era:<hash of the server key>         an era verdict (JSON)
//	<prefix>c:{<hash of the server>}:<hash>      a cached result
//	<prefix>cz:{<hash of the server>}:<method>   the index of one method's live results
//	<prefix>ci:{<hash of the server>}:<method>   the same, as earlier versions wrote it
//	<prefix>cm:{<hash of the server>}            the methods with an index
//
// The braces are Redis Cluster hash tags: a server's results and their
// indexes share a slot, so that an invalidation (one Lua script) works on
// a cluster. Tokens, registrations, leases and era records are one key
// each.
//
// # Secrets
//
// Tokens and client registrations are sealed with AES-GCM under
// [Options.EncryptionKey], the key's name as additional data (a sealed
// value moved to another key does not open); private cached results are
// sealed too (one found in the clear is refused). Without a key, [New]
// refuses unless [Options.Plaintext] says to store them in the clear. No
// token appears in an error or a log line of this package. The replicas
// of a fleet must share the key: a replica with another takes the
// others' tokens as corrupt ([ErrCorrupt]) and authorizes anew,
// replacing them, as its log's warnings say. With DPoP they must share
// auth.Config's DPoPKey too: a token is bound to the key whose proofs
// obtained it.
//
// # Cluster and Sentinel
//
// [New] takes a redis.UniversalClient: a *redis.Client, a
// *redis.ClusterClient (Addrs with several nodes) or a failover client
// (UniversalOptions.MasterName with the Sentinels' addresses) all work.
//
// # Concurrency
//
// A Store is safe for concurrent use by any number of clients and
// goroutines; it holds no state of its own besides its options.
//
// # Errors
//
// Every failure of Redis is a [*Error] naming the operation; the client
// and auth packages degrade on them (no caching; the token held in
// memory) rather than failing a call. A stored value that does not open
// or decode is an error matching [ErrCorrupt], and so is a token,
// registration or cached result larger than this version writes, which
// is not read whole.
package redisstore
