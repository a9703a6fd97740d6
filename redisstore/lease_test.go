package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/redisstore"
)

// TestLeaseWithoutExpiryEnds: a lease in Redis without a TTL (written by
// an older or broken replica, or left by a PERSIST) is not held for ever:
// a replica waiting for it gets it within about a LeaseTTL.
func TestLeaseWithoutExpiryEnds(t *testing.T) {
	r := startRedis(t)
	rdb := r.client(t)
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{LeaseTTL: 200 * time.Millisecond})
	mustOK(t, rdb.Set(ctx, "conduit:lease:"+sha("k"), "gone-replica", 0).Err())
	actx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := s.AcquireLease(actx, "k", "b"); err != nil {
		t.Fatalf("AcquireLease of a lease without expiry = %v, want it after its holder's LeaseTTL", err)
	}
	if owner, _ := rdb.Get(ctx, "conduit:lease:"+sha("k")).Result(); owner != "b" {
		t.Errorf("lease owner %q, want b", owner)
	}
}
