package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"sync"
	"time"
)

// RefreshLeaser is implemented by token stores that several Clients share,
// in one process, in several, or on several machines. It grants the lease
// under which one Client refreshes (or replaces) the token of one key, so
// that a rotating refresh token is used once: the Client takes the lease,
// reads the store again, uses a token another holder already saved as it
// is, and otherwise refreshes and saves before releasing.
//
// A lease has an owner, a random token the Client draws for each attempt:
// only its owner renews or releases it. A lease with a duration expires
// when its holder stops renewing it (its process died, or it lost the
// store), so that another holder can take it; the Client renews it every
// third of its duration while the refresh runs and abandons the refresh
// (its context is canceled) once the lease is lost, and before it may
// have expired: a tenth of its duration before its duration has passed
// since the last renewal that succeeded began (or since AcquireLease
// returned).
//
// Every method may block on I/O, is bounded by ctx, and may be called
// concurrently, also for the same key.
type RefreshLeaser interface {
	// AcquireLease blocks until owner holds the lease of key, or ctx
	// ends. It returns the lease's duration: it expires that long after
	// it was taken or last renewed; 0 means it lasts until released or
	// until its holder's process ends, with no renewal needed.
	AcquireLease(ctx context.Context, key, owner string) (ttl time.Duration, err error)
	// RenewLease extends the lease of key that owner holds by its full
	// duration. It returns an error matching [ErrLeaseLost] when owner no
	// longer holds it. Renewing twice is harmless.
	RenewLease(ctx context.Context, key, owner string) error
	// ReleaseLease releases the lease of key if owner holds it, and does
	// nothing otherwise (a lease that expired and was taken by another
	// stays theirs). It is idempotent.
	ReleaseLease(ctx context.Context, key, owner string) error
}

// Locker is implemented by stores that lock as a whole: Lock takes an
// exclusive lock on the store, blocking until it is held or ctx ends, and
// returns the function that releases it.
//
// Deprecated: implement [RefreshLeaser], which locks one key at a time
// and serves a network store. A store that implements only Locker still
// has the Client's refreshes serialized by it.
type Locker interface {
	Lock(ctx context.Context) (unlock func(), err error)
}

// ErrLeaseLost reports a refresh lease its holder no longer holds: it
// expired (the holder did not renew it in time) and may have been taken
// by another.
var ErrLeaseLost = errors.New("auth: refresh lease lost")

// StoreError reports a [TokenStore] that failed (a file that cannot be
// written, a network store that cannot be reached). A Client whose store
// fails keeps using the token it holds while that token is valid, and
// logs the failure once until the store works again.
type StoreError struct {
	// Op is the operation: "load token", "save token", "acquire lease", ….
	Op string
	// Err is the store's error.
	Err error
}

func (e *StoreError) Error() string { return "auth: token store: " + e.Op + ": " + e.Err.Error() }

// Unwrap returns the store's error.
func (e *StoreError) Unwrap() error { return e.Err }

// storeErr wraps a store's err in a [*StoreError] (nil stays nil; a
// context error stays as it is, the caller's own).
func storeErr(op string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if _, ok := errors.AsType[*StoreError](err); ok {
		return err
	}
	return &StoreError{Op: op, Err: err}
}

// releaseTimeout bounds the release of a lease, which runs even when the
// refresh's context ended.
const releaseTimeout = 5 * time.Second

// newOwner returns a fresh lease owner token.
func newOwner() string { return rand.Text() }

// lease takes the store's refresh lease of the Client's key (or the lock
// of a [Locker] store) and returns a context that ends when ctx ends or
// the lease is lost, and the function that releases the lease. While it
// is held, a goroutine renews a lease with a duration; release stops
// and joins it.
func (c *Client) lease(ctx context.Context) (context.Context, func(), error) {
	switch l := c.store.(type) {
	case RefreshLeaser:
		owner := newOwner()
		ttl, err := l.AcquireLease(ctx, c.key, owner)
		if err != nil {
			return nil, nil, storeErr("acquire lease", err)
		}
		lctx, cancel := context.WithCancelCause(ctx)
		stop := make(chan struct{})
		done := make(chan struct{})
		if ttl > 0 {
			acquired := time.Now()
			go func() {
				defer close(done)
				c.renewLease(lctx, l, owner, ttl, acquired, stop, cancel)
			}()
		} else {
			close(done) // the lease lasts until released: nothing to renew
		}
		release := func() {
			close(stop)
			<-done
			cancel(nil)
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			defer rcancel()
			if err := l.ReleaseLease(rctx, c.key, owner); err != nil {
				// The lease expires by itself.
				c.log.Warn("auth: releasing the refresh lease", "err", err)
			}
		}
		return lctx, release, nil
	case Locker:
		unlock, err := l.Lock(ctx)
		if err != nil {
			return nil, nil, storeErr("lock", err)
		}
		return ctx, unlock, nil
	}
	return ctx, func() {}, nil
}

// renewLease renews the lease every third of ttl until stop is closed.
// When the lease is lost, or may expire before another renewal, it
// cancels the refresh with [ErrLeaseLost]: another holder may take it.
//
// The lease runs out ttl after the store renewed it, which happened
// somewhere within the call that renewed it: the refresh is abandoned
// ttl after the start of the last renewal that succeeded (the lease's
// acquisition counts from acquired, when AcquireLease returned), less
// [leaseMargin] for the clocks' drift and for the cancellation to reach
// the token request. A timer ends it, not the next tick, and a renewal
// under way is cut short at that moment.
func (c *Client) renewLease(ctx context.Context, l RefreshLeaser, owner string, ttl time.Duration, acquired time.Time, stop <-chan struct{}, cancel context.CancelCauseFunc) {
	every := max(ttl/3, time.Millisecond)
	t := time.NewTicker(every)
	defer t.Stop()
	deadline := acquired.Add(ttl - leaseMargin(ttl))
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	lost := func(err error) {
		c.log.Warn("auth: refresh lease lost; abandoning the refresh", "err", err)
		cancel(fmt.Errorf("%w: %v", ErrLeaseLost, err))
	}
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-expire.C:
			lost(fmt.Errorf("not renewed in time: the lease of %v may expire", ttl))
			return
		case <-t.C:
		}
		started := time.Now()
		end := started.Add(every)
		if deadline.Before(end) {
			end = deadline
		}
		rctx, rcancel := context.WithDeadline(ctx, end)
		err := l.RenewLease(rctx, c.key, owner)
		rcancel()
		switch {
		case err == nil:
			deadline = started.Add(ttl - leaseMargin(ttl))
			expire.Reset(time.Until(deadline))
		case errors.Is(err, ErrLeaseLost):
			lost(err)
			return
		}
	}
}

// leaseMargin is how long before a lease of duration ttl may expire its
// holder gives up: a tenth of it.
func leaseMargin(ttl time.Duration) time.Duration { return ttl / 10 }

// leaseTable holds the leases of one process, per key: a one-slot
// semaphore per key and the owner holding it. The zero value is ready.
type leaseTable struct {
	mu sync.Mutex
	m  map[string]*heldLease // guarded by mu; created lazily
}

type heldLease struct {
	sem     chan struct{} // one slot: full while held
	owner   string        // guarded by leaseTable.mu; "" when free
	release func()        // guarded by leaseTable.mu; what else to release
}

// acquire waits for key's slot (or ctx), then runs outer, if any, to take
// what the lease also holds (a file lock), and records owner.
func (t *leaseTable) acquire(ctx context.Context, key, owner string, outer func(context.Context) (func(), error)) error {
	t.mu.Lock()
	if t.m == nil {
		t.m = map[string]*heldLease{}
	}
	h := t.m[key]
	if h == nil {
		h = &heldLease{sem: make(chan struct{}, 1)}
		t.m[key] = h
	}
	t.mu.Unlock()
	select {
	case h.sem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	release := func() {}
	if outer != nil {
		r, err := outer(ctx)
		if err != nil {
			<-h.sem
			return err
		}
		release = r
	}
	t.mu.Lock()
	h.owner, h.release = owner, release
	t.mu.Unlock()
	return nil
}

// renew reports whether owner holds key's lease.
func (t *leaseTable) renew(key, owner string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if h := t.m[key]; h == nil || h.owner != owner || owner == "" {
		return ErrLeaseLost
	}
	return nil
}

// release frees key's lease if owner holds it.
func (t *leaseTable) release(key, owner string) {
	t.mu.Lock()
	h := t.m[key]
	if h == nil || h.owner != owner || owner == "" {
		t.mu.Unlock()
		return
	}
	release := h.release
	h.owner, h.release = "", nil
	t.mu.Unlock()
	release()
	<-h.sem
}
