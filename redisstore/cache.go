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
	return s.entryPrefix(k.Server) + entryHash(k)
}

func entryHash(k cache.Key) string { return hash(k.Method + "\x00" + k.Partition + "\x00" + k.Params) }

// entryPrefix starts the name of every entry of server.
func (s *Store) entryPrefix(server string) string { return s.o.Prefix + "c:" + s.slot(server) + ":" }

// indexKey names the index of server's results of method: a sorted set
// of "hash\x00partition\x00params" (the entry's name is its server's
// entryPrefix and hash), each scored with the entry's expiry.
func (s *Store) indexKey(server, method string) string {
	return s.o.Prefix + "cz:" + s.slot(server) + ":" + method
}

// oldIndexKey names the index of this package's earlier versions: a hash
// of "partition\x00params" to the entry's name, which kept a field for
// every entry stored while the index lived. Invalidations walk it too,
// for the entries replicas of those versions store.
func (s *Store) oldIndexKey(server, method string) string {
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
// index of e's method, scored with its expiry by the Redis server's
// clock, which also drops the index's expired entries: the index holds
// the entries that live. One script, so one atomic step. An entry
// already expired, or larger than [Options.MaxEntrySize], is not stored.
// A private entry is sealed when the Store has an EncryptionKey.
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
	h := entryHash(k)
	name := s.entryPrefix(k.Server) + h
	if e.Scope != protocol.CacheScopePublic {
		b = s.seal(name, b)
	}
	keys := []string{name, s.indexKey(k.Server, k.Method), s.methodsKey(k.Server)}
	member := h + "\x00" + k.Partition + "\x00" + k.Params
	err = storeScript.Run(ctx, s.rdb, keys, b, ttl.Milliseconds(), member, k.Method).Err()
	return opErr(op, err)
}

// storeScript stores an entry (KEYS[1], value ARGV[1], TTL ARGV[2] ms),
// adds its member (ARGV[3]) to the index (KEYS[2]) scored with its
// expiry, drops the index's members that expired, and records the method
// (ARGV[4]) in the server's set of methods (KEYS[3]). An index and the
// set live as long as their longest entry: NX sets the first expiry, GT
// lengthens it. The time is the Redis server's, as the TTLs are.
var storeScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('ZADD', KEYS[2], now + ttl, ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', '(' .. now)
redis.call('SADD', KEYS[3], ARGV[4])
for i = 2, 3 do
	redis.call('PEXPIRE', KEYS[i], ttl, 'NX')
	redis.call('PEXPIRE', KEYS[i], ttl, 'GT')
end
return 1`)

// deleteScript removes the entries the indexes in KEYS list that match a
// partition (ARGV[1], "" for any) and a resource URI (ARGV[2], "" for
// any; an entry matches when its params is a prefix of the URI or the URI
// a prefix of its params), with their index members. See cache.Selector.
// An index is a sorted set (see indexKey) or the hash of earlier versions
// (see oldIndexKey). A member or field that is not "partition\0params"
// after its hash (not written by this version) matches every selector: an
// invalidation may remove too much, never fail or leave a stale entry.
// Only a key of the index's server's entries (it starts with ARGV[3]) is
// deleted: no other key.
var deleteScript = redis.NewScript(`
local function matches(part, params)
	if part == nil then
		return true
	end
	if ARGV[1] ~= '' and part ~= ARGV[1] then
		return false
	end
	return ARGV[2] == '' or string.sub(ARGV[2], 1, #params) == params or string.sub(params, 1, #ARGV[2]) == ARGV[2]
end
local function split(field)
	local sep = string.find(field, '\0', 1, true)
	if sep == nil then
		return nil, nil
	end
	return string.sub(field, 1, sep - 1), string.sub(field, sep + 1)
end
local function drop(entry)
	if string.sub(entry, 1, #ARGV[3]) == ARGV[3] then
		redis.call('DEL', entry)
	end
end
local n = 0
for _, idx in ipairs(KEYS) do
	local kind = redis.call('TYPE', idx).ok
	if kind == 'zset' then
		for _, member in ipairs(redis.call('ZRANGE', idx, 0, -1)) do
			local h, rest = split(member)
			local part, params
			if rest ~= nil then
				part, params = split(rest)
			end
			if matches(part, params) then
				if h ~= nil and string.match(h, '^%x+$') then
					drop(ARGV[3] .. h)
				end
				redis.call('ZREM', idx, member)
				n = n + 1
			end
		end
	elseif kind == 'hash' then
		local all = redis.call('HGETALL', idx)
		for i = 1, #all, 2 do
			local field, entry = all[i], all[i + 1]
			local part, params = split(field)
			if matches(part, params) then
				drop(entry)
				redis.call('HDEL', idx, field)
				n = n + 1
			end
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
	keys := make([]string, 0, 2*len(methods))
	for _, m := range methods {
		keys = append(keys, s.indexKey(sel.Server, m), s.oldIndexKey(sel.Server, m))
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
