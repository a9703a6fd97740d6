package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
)

func (s *Store) tokenKey(key string) string     { return s.o.Prefix + "tok:" + hash(key) }
func (s *Store) clientKey(issuer string) string { return s.o.Prefix + "reg:" + hash(issuer) }
func (s *Store) leaseKey(key string) string     { return s.o.Prefix + "lease:" + hash(key) }

// loadSealed reads, opens and decodes the value of name into a new V;
// nil when there is none.
func loadSealed[V any](ctx context.Context, s *Store, op, name string) (*V, error) {
	b, err := s.get(ctx, op, name, maxRecord)
	if err != nil || b == nil {
		return nil, err
	}
	plain, err := s.open(name, b)
	if err != nil {
		return nil, opErr(op, err)
	}
	v := new(V)
	if json.Unmarshal(plain, v) != nil {
		// The decoder's message may quote the value: not repeated.
		return nil, opErr(op, ErrCorrupt)
	}
	return v, nil
}

// saveSealed encodes, seals and writes v as the value of name; nil
// deletes it.
func saveSealed[V any](ctx context.Context, s *Store, op, name string, v *V) error {
	if v == nil {
		return opErr(op, s.rdb.Del(ctx, name).Err())
	}
	b, err := json.Marshal(v)
	if err != nil {
		return opErr(op, err)
	}
	return opErr(op, s.rdb.Set(ctx, name, s.seal(name, b), 0).Err())
}

// LoadToken implements [auth.TokenStore].
func (s *Store) LoadToken(ctx context.Context, key string) (*auth.Token, error) {
	return loadSealed[auth.Token](ctx, s, "load token", s.tokenKey(key))
}

// SaveToken implements [auth.TokenStore]. A token has no Redis TTL: its
// refresh token outlives the access token.
func (s *Store) SaveToken(ctx context.Context, key string, tok *auth.Token) error {
	return saveSealed(ctx, s, "save token", s.tokenKey(key), tok)
}

// LoadClient implements [auth.TokenStore].
func (s *Store) LoadClient(ctx context.Context, issuer string) (*auth.ClientRegistration, error) {
	return loadSealed[auth.ClientRegistration](ctx, s, "load client", s.clientKey(issuer))
}

// SaveClient implements [auth.TokenStore].
func (s *Store) SaveClient(ctx context.Context, issuer string, reg *auth.ClientRegistration) error {
	return saveSealed(ctx, s, "save client", s.clientKey(issuer), reg)
}

// acquireScript takes the lease for ARGV[1] for ARGV[2] ms if it is free:
// 1 if taken, 0 if not. A lease held without an expiry (not written by
// this version, or made persistent) gets ARGV[2] ms: no holder keeps it
// for ever.
var acquireScript = redis.NewScript(`
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
	return 1
end
if redis.call('PTTL', KEYS[1]) == -1 then
	redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// renewScript extends a lease its owner holds: 1 if renewed, 0 if not
// held by ARGV[1].
var renewScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0`)

// releaseScript deletes a lease its owner holds.
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then
	return redis.call('DEL', KEYS[1])
end
return 0`)

// AcquireLease implements [auth.RefreshLeaser]: SET NX PX with the owner
// as the value, tried again every [Options.LeasePoll] until it succeeds
// or ctx ends. The lease lasts [Options.LeaseTTL]. A lease found without
// an expiry is given one of [Options.LeaseTTL], so that it ends.
func (s *Store) AcquireLease(ctx context.Context, key, owner string) (time.Duration, error) {
	name := s.leaseKey(key)
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		n, err := acquireScript.Run(ctx, s.rdb, []string{name}, owner, s.o.LeaseTTL.Milliseconds()).Int()
		if err != nil {
			return 0, opErr("acquire lease", err)
		}
		if n == 1 {
			return s.o.LeaseTTL, nil
		}
		t.Reset(s.o.LeasePoll)
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-t.C:
		}
	}
}

// RenewLease implements [auth.RefreshLeaser] with a script that extends
// the lease only while owner holds it.
func (s *Store) RenewLease(ctx context.Context, key, owner string) error {
	n, err := renewScript.Run(ctx, s.rdb, []string{s.leaseKey(key)}, owner, s.o.LeaseTTL.Milliseconds()).Int()
	if err != nil {
		return opErr("renew lease", err)
	}
	if n == 0 {
		return opErr("renew lease", auth.ErrLeaseLost)
	}
	return nil
}

// ReleaseLease implements [auth.RefreshLeaser] with a script that deletes
// the lease only while owner holds it.
func (s *Store) ReleaseLease(ctx context.Context, key, owner string) error {
	err := releaseScript.Run(ctx, s.rdb, []string{s.leaseKey(key)}, owner).Err()
	if errors.Is(err, redis.Nil) {
		err = nil
	}
	return opErr("release lease", err)
}
