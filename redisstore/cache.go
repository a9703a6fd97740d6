package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/protocol"
)

// slot is the hash tag of a server's results and indexes.
func (s *Store) slot(server string) string { return "{" + hash(server) + "}" }

func (s *Store) entryKey(k cache.Key) string {
	return s.entryPrefix(k.Server) + hash(k.Method+"\x00"+k.Partition+"\x00"+k.Params)
}

// entryPrefix starts the name of every entry of server.
func (s *Store) entryPrefix(server string) string { return s.o.Prefix + "c:" + s.slot(server) + ":" }

func (s *Store) indexKey(server, method string) string {
	return s.o.Prefix + "ci:" + s.slot(server) + ":" + method
}

func (s *Store) methodsKey(server string) string { return s.o.Prefix + "cm:" + s.slot(server) }

// storedEntry is a cached result in Redis.
type storedEntry struct {
	Result  json.RawMessage `json:"r"`
	Expires time.Time       `json:"e"`
	Scope   string          `json:"s"`
}

// LoadResult implements [cache.Store]: one GET. With an EncryptionKey,
// an entry of a private partition must be sealed, as StoreResult writes
// it: one in the clear (a forgery, or from a plaintext replica) is an
// error matching [ErrCorrupt], never served as that partition's result.
func (s *Store) LoadResult(ctx context.Context, k cache.Key) (cache.Entry, bool, error) {
	const op = "load result"
	name := s.entryKey(k)
	b, err := s.get(ctx, op, name, s.maxEntry())
	if err != nil || b == nil {
		return cache.Entry{}, false, err
	}
	switch {
	case b[0] == sealedMark:
		if b, err = s.open(name, b); err != nil {
			return cache.Entry{}, false, opErr(op, err)
		}
	case s.aead != nil && k.Partition != protocol.CacheScopePublic:
		return cache.Entry{}, false, opErr(op, ErrCorrupt)
	}
	var e storedEntry
	if json.Unmarshal(b, &e) != nil {
		return cache.Entry{}, false, opErr(op, ErrCorrupt)
	}
	return cache.Entry{Result: e.Result, Expires: e.Expires, Scope: e.Scope}, true, nil
}

// StoreResult implements [cache.Store]: the entry lives until e.Expires
// (the result's ttlMs) as its Redis TTL, and is recorded in its server's
// index of e's method, in one transaction. An entry already expired, or
// larger than [Options.MaxEntrySize], is not stored. A private entry is
// sealed when the Store has an EncryptionKey.
func (s *Store) StoreResult(ctx context.Context, k cache.Key, e cache.Entry) error {
	const op = "store result"
	ttl := time.Until(e.Expires).Truncate(time.Millisecond)
	if ttl <= 0 || s.o.MaxEntrySize > 0 && len(e.Result) > s.o.MaxEntrySize {
		return nil
	}
	b, err := json.Marshal(storedEntry{Result: e.Result, Expires: e.Expires.UTC(), Scope: e.Scope})
	if err != nil {
		return opErr(op, err)
	}
	name := s.entryKey(k)
	if e.Scope != protocol.CacheScopePublic {
		b = s.seal(name, b)
	}
	idx, methods := s.indexKey(k.Server, k.Method), s.methodsKey(k.Server)
	ms := ttl.Milliseconds()
	_, err = s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, name, b, ttl)
		p.HSet(ctx, idx, k.Partition+"\x00"+k.Params, name)
		p.SAdd(ctx, methods, k.Method)
		// An index lives as long as its longest entry: NX sets the first
		// expiry, GT lengthens it.
		for _, key := range []string{idx, methods} {
			p.Do(ctx, "PEXPIRE", key, ms, "NX")
			p.Do(ctx, "PEXPIRE", key, ms, "GT")
		}
		return nil
	})
	return opErr(op, err)
}

// deleteScript removes the entries the indexes in KEYS list that match a
// partition (ARGV[1], "" for any) and a resource URI (ARGV[2], "" for
// any; an entry matches when its params is a prefix of the URI or the URI
// a prefix of its params), with their index fields. See cache.Selector. A
// field that is not "partition\0params" (not written by this version)
// matches every selector: an invalidation may remove too much, never
// fail or leave a stale entry. Only a value that names an entry of the
// index's server (it starts with ARGV[3]) is deleted: no other key.
var deleteScript = redis.NewScript(`
local n = 0
for _, idx in ipairs(KEYS) do
	local all = redis.call('HGETALL', idx)
	for i = 1, #all, 2 do
		local field, entry = all[i], all[i + 1]
		local sep = string.find(field, '\0', 1, true)
		local ok = sep == nil
		if not ok then
			local part, params = string.sub(field, 1, sep - 1), string.sub(field, sep + 1)
			ok = ARGV[1] == '' or part == ARGV[1]
			if ok and ARGV[2] ~= '' then
				ok = string.sub(ARGV[2], 1, #params) == params or string.sub(params, 1, #ARGV[2]) == ARGV[2]
			end
		end
		if ok then
			if string.sub(entry, 1, #ARGV[3]) == ARGV[3] then
				redis.call('DEL', entry)
			end
			redis.call('HDEL', idx, field)
			n = n + 1
		end
	end
end
return n`)

// DeleteResults implements [cache.Store]: the selector's server and
// methods name the indexes to walk (all of the server's methods when it
// names none), and one script removes the matching entries atomically.
func (s *Store) DeleteResults(ctx context.Context, sel cache.Selector) error {
	const op = "delete results"
	methods := sel.Methods
	if len(methods) == 0 {
		var err error
		if methods, err = s.rdb.SMembers(ctx, s.methodsKey(sel.Server)).Result(); err != nil {
			return opErr(op, err)
		}
		if len(methods) == 0 {
			return nil
		}
	}
	keys := make([]string, len(methods))
	for i, m := range methods {
		keys[i] = s.indexKey(sel.Server, m)
	}
	err := deleteScript.Run(ctx, s.rdb, keys, sel.Partition, sel.URI, s.entryPrefix(sel.Server)).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return opErr(op, err)
}

func (s *Store) eraKey(key string) string { return s.o.Prefix + "era:" + hash(key) }

// LoadEra implements [cache.EraStore].
func (s *Store) LoadEra(ctx context.Context, key string) (cache.EraRecord, bool, error) {
	const op = "load era"
	b, err := s.get(ctx, op, s.eraKey(key), -1)
	if err != nil || b == nil {
		return cache.EraRecord{}, false, err
	}
	var rec cache.EraRecord
	if json.Unmarshal(b, &rec) != nil {
		return cache.EraRecord{}, false, opErr(op, ErrCorrupt)
	}
	return rec, true, nil
}

// StoreEra implements [cache.EraStore]: the record lives
// [Options.EraTTL].
func (s *Store) StoreEra(ctx context.Context, key string, rec cache.EraRecord) error {
	const op = "store era"
	b, err := json.Marshal(rec)
	if err != nil {
		return opErr(op, err)
	}
	return opErr(op, s.rdb.Set(ctx, s.eraKey(key), b, s.o.EraTTL).Err())
}

// DeleteEra implements [cache.EraStore].
func (s *Store) DeleteEra(ctx context.Context, key string) error {
	return opErr("delete era", s.rdb.Del(ctx, s.eraKey(key)).Err())
}
