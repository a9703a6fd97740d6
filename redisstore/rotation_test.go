package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/redisstore"
)

// seedFleet stores the grant a user obtained once, as every replica of
// the fleet will find it, and returns the store the test reads.
func seedFleet(t *testing.T, r *redisServer, as *strictAS, mcp *protectedMCP) *redisstore.Store {
	t.Helper()
	s := newStore(t, r.client(t), redisstore.Options{})
	if err := s.SaveToken(testCtx(t), canonical(mcp.URL), as.seed()); err != nil {
		t.Fatal(err)
	}
	return s
}

// canonical is the store key of an MCP server URL (auth.CanonicalResource
// of an httptest URL is the URL itself).
func canonical(u string) string { return u }

func replicas(n int, base replicaConfig) []replicaConfig {
	out := make([]replicaConfig, n)
	for i := range out {
		out[i] = base
		out[i].ID = fmt.Sprintf("r%d", i)
	}
	return out
}

// TestFleetRotationUnderContention: 8 replicas (OS processes), 50
// concurrent callers each, share one user's grant through Redis, against
// an authorization server that revokes the grant when a refresh token is
// used twice. Through several expiries, every call succeeds, no refresh
// is rejected, and each token generation is refreshed exactly once.
func TestFleetRotationUnderContention(t *testing.T) {
	r := startRedis(t)
	as := newStrictAS(t, 2) // tokens live 2 s, refreshed 1 s before: a rotation a second
	mcp := newProtectedMCP(t, as, testserver.Options{})
	seedFleet(t, r, as, mcp)
	const run = 4 * time.Second
	f := startFleet(t, replicas(8, replicaConfig{Redis: r.addr(), MCP: mcp.URL, Concurrency: 50, Duration: run,
		Pause: 50 * time.Millisecond, LeaseTTL: 2 * time.Second, RefreshSkew: time.Second}))
	reports := f.wait(60 * time.Second)
	if len(reports) != 8 {
		t.Fatalf("%d replicas reported, want 8", len(reports))
	}
	calls := 0
	for id, rep := range reports {
		calls += rep.Calls
		if rep.Failures != 0 {
			t.Errorf("replica %s: %d of %d calls failed, first: %s", id, rep.Failures, rep.Calls, rep.FirstErr)
		}
		if rep.Leaked > 0 {
			t.Errorf("replica %s: %d goroutines left after Close", id, rep.Leaked)
		}
	}
	refreshes, rejected, revoked, log := as.counts()
	t.Logf("%d calls; %d refreshes: %v", calls, refreshes, log)
	if rejected != 0 || revoked {
		t.Errorf("invalid_grant answers = %d (grant revoked: %v), want 0", rejected, revoked)
	}
	// One refresh a second (lifetime 2 s - skew 1 s) through the run,
	// each of a token generation used once (a second use is rejected
	// above): not fewer (the tokens expire), not more (each expiry
	// once; slack for the start and a slow machine).
	if min, max := 3, int(run/time.Second)+2; refreshes < min || refreshes > max {
		t.Errorf("refreshes = %d, want %d..%d (one per expiry)", refreshes, min, max)
	}
	if calls < 8*50 {
		t.Errorf("calls = %d, want at least one per caller", calls)
	}
}

// TestFleetLeaseHolderKilled: the replica holding the refresh lease is
// SIGKILLed while its refresh is in flight (the authorization server
// holds that request). The lease expires, another replica refreshes, and
// no call of the survivors waits longer than the lease plus a refresh
// (bounds with a generous margin: this machine is shared).
func TestFleetLeaseHolderKilled(t *testing.T) {
	r := startRedis(t)
	as := newStrictAS(t, 4) // a refresh is due 1 s after issue (skew 3 s)
	mcp := newProtectedMCP(t, as, testserver.Options{})
	seedFleet(t, r, as, mcp)
	const lease = time.Second
	stalled := make(chan string, 1)
	var once sync.Once
	as.stall = func(req *http.Request) bool {
		first := false
		once.Do(func() { first = true })
		if !first {
			return true
		}
		stalled <- req.Header.Get("X-Replica")
		<-req.Context().Done() // the holder's connection closes when it dies
		return false
	}
	f := startFleet(t, replicas(4, replicaConfig{Redis: r.addr(), MCP: mcp.URL, Concurrency: 50, Duration: 4 * time.Second,
		Pause: 50 * time.Millisecond, LeaseTTL: lease, RefreshSkew: 3 * time.Second}))
	var victim string
	var killed time.Time
	select {
	case victim = <-stalled:
		f.kill(victim)
		killed = time.Now()
	case <-time.After(30 * time.Second):
		t.Fatal("no refresh reached the authorization server")
	}
	reports := f.wait(60 * time.Second)
	if _, ok := reports[victim]; ok || len(reports) != 3 {
		t.Fatalf("reports from %d replicas (victim %s among them: %v), want the 3 survivors", len(reports), victim, ok)
	}
	bound := 2*lease + 2*time.Second // lease + one refresh, with margin
	for id, rep := range reports {
		if rep.Failures != 0 {
			t.Errorf("replica %s: %d of %d calls failed, first: %s", id, rep.Failures, rep.Calls, rep.FirstErr)
		}
		if rep.MaxLatency > bound {
			t.Errorf("replica %s: a call waited %v, want at most %v (lease %v + a refresh)", id, rep.MaxLatency, bound, lease)
		}
	}
	refreshes, rejected, revoked, log := as.counts()
	t.Logf("victim %s killed at %s; refreshes: %v", victim, killed.Format("15:04:05.000"), log)
	if rejected != 0 || revoked || refreshes == 0 {
		t.Fatalf("refreshes = %d, invalid_grant = %d (revoked %v); want a takeover without rejection", refreshes, rejected, revoked)
	}
	if gap := log[0].At.Sub(killed); gap < 0 || gap > bound {
		t.Errorf("the takeover refresh came %v after the kill, want within %v", gap, bound)
	}
	if log[0].Replica == victim {
		t.Errorf("the first completed refresh is the victim's")
	}
}

// TestFleetRedisFails: Redis goes away for a while mid-run (shut down
// saving its data, started again with it). Calls keep working with what each
// replica holds: the token it has (due for refresh, still valid) and no
// cache; each store failure is logged once per replica; no goroutine or
// connection leaks; and the fleet's one refresh lands in Redis for all,
// made once Redis is back (or made just before it went down and saved
// once it is back, the lease held meanwhile).
func TestFleetRedisFails(t *testing.T) {
	r := startRedis(t)
	// Tokens live 14 s; the seed's refresh is due 7 s after issue (the
	// skew is at most half the lifetime). Redis goes down 2 s before that
	// moment (a margin for a loaded machine) for 3 s, so that each replica keeps using the token it holds,
	// which outlives the outage and the go-redis pool's redial (once a
	// second after it gave up dialing) by a margin. The lease outlives the
	// outage: a refresh that the outage cuts off from its save keeps it
	// and saves once Redis is back, before anyone else may refresh.
	as := newStrictAS(t, 14)
	mcp := newProtectedMCP(t, as, testserver.Options{TTL: time.Minute, CacheScope: "public"})
	store := seedFleet(t, r, as, mcp)
	due := time.Now().Add(7 * time.Second)
	f := startFleet(t, replicas(4, replicaConfig{Redis: r.addr(), MCP: mcp.URL, Concurrency: 50, Duration: 11 * time.Second,
		Pause: 50 * time.Millisecond, LeaseTTL: 6 * time.Second, RefreshSkew: 13 * time.Second, Cache: true}))
	f.waitReady(30 * time.Second)
	if wait := time.Until(due.Add(-2 * time.Second)); wait > 0 {
		time.Sleep(wait)
	} else {
		t.Fatalf("replicas ready %v after the refresh should have been due minus 2 s: too slow a machine for this test", -wait)
	}
	r.restart(3 * time.Second) // down across the moment the refresh is due
	back := time.Now()
	reports := f.wait(60 * time.Second)
	if len(reports) != 4 {
		t.Fatalf("%d replicas reported, want 4", len(reports))
	}
	degraded := 0 // replicas that used their token while the store was down
	for id, rep := range reports {
		if rep.Failures != 0 {
			t.Errorf("replica %s: %d of %d calls failed, first: %s", id, rep.Failures, rep.Calls, rep.FirstErr)
		}
		for msg, n := range rep.WarningsBy {
			if n != 1 {
				t.Errorf("replica %s logged %q %d times, want once", id, msg, n)
			}
		}
		if rep.Warnings == 0 {
			t.Errorf("replica %s logged no store failure", id)
		}
		if rep.WarningsBy[tokenStoreWarning] > 0 {
			degraded++
		}
		if rep.Leaked > 0 || rep.PoolConns > 20 {
			t.Errorf("replica %s: %d goroutines left, %d Redis connections; want 0 and the pool's bound", id, rep.Leaked, rep.PoolConns)
		}
	}
	if degraded == 0 {
		t.Error("no replica reached a refresh while Redis was down")
	}
	refreshes, rejected, revoked, log := as.counts()
	t.Logf("Redis back at %s; refreshes: %v; replicas: %+v", back.Format("15:04:05.000"), log, reports)
	if rejected != 0 || revoked {
		t.Errorf("invalid_grant answers = %d (revoked %v), want 0", rejected, revoked)
	}
	// One refresh for the fleet, through the lease: after Redis is back,
	// or just before it went down, its save then retried until it was.
	if refreshes == 0 || refreshes > 2 {
		t.Errorf("refreshes %v: want one for the fleet", log)
	}
	tok, err := store.LoadToken(testCtx(t), canonical(mcp.URL))
	if err != nil || tok == nil || !as.valid(tok.AccessToken) {
		t.Errorf("token in Redis after the run = %v, %v; want the fleet's current one", tok, err)
	}
	if keys, _ := r.client(t).Keys(testCtx(t), "conduit:c:*").Result(); len(keys) == 0 {
		t.Error("no cached result in Redis after it came back")
	}
}

// tokenStoreWarning is what an auth.Client logs when its store fails.
const tokenStoreWarning = "auth: token store failing; using the token held in memory until it works again"

// TestLeaseRenewedDuringLongRefresh: a refresh that takes three times
// the lease (the authorization server is slow) keeps its lease by
// renewing it, so a second replica waits and then uses the new token
// instead of presenting the same refresh token (which the strict server
// would answer by revoking the grant).
func TestLeaseRenewedDuringLongRefresh(t *testing.T) {
	r := startRedis(t)
	as := newStrictAS(t, 60)
	mcp := newProtectedMCP(t, as, testserver.Options{})
	seed := as.seed()
	seed.Expiry = time.Now().Add(-time.Second) // due now
	const lease = 300 * time.Millisecond
	as.stall = func(*http.Request) bool { time.Sleep(3 * lease); return true }
	newClient := func() *auth.Client {
		s := newStore(t, r.client(t), redisstore.Options{LeaseTTL: lease})
		c, err := auth.New(auth.Config{ServerURL: mcp.URL, ClientID: "fleet", Store: s})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := newClient(), newClient()
	mustOK(t, newStore(t, r.client(t), redisstore.Options{}).SaveToken(testCtx(t), canonical(mcp.URL), seed))
	ctx := testCtx(t)
	type result struct {
		tok string
		err error
	}
	first := make(chan result, 1)
	go func() { tok, err := a.Token(ctx); first <- result{tok, err} }()
	time.Sleep(lease / 2) // a holds the lease and waits on the server
	tokB, errB := b.Token(ctx)
	ra := <-first
	if ra.err != nil || errB != nil || ra.tok != tokB || tokB == seed.AccessToken {
		t.Errorf("tokens: a = %q, %v; b = %q, %v; want the same new token", ra.tok, ra.err, tokB, errB)
	}
	if refreshes, rejected, revoked, _ := as.counts(); refreshes != 1 || rejected != 0 || revoked {
		t.Errorf("refreshes = %d, invalid_grant = %d (revoked %v); want 1, 0", refreshes, rejected, revoked)
	}
}

// laggyPath is a network path from one replica to Redis that a test can
// slow down and cut: every read waits lag before it returns (the replies
// come late, the commands ran on time), and once cut, its connections are
// closed and no new one is made.
type laggyPath struct {
	lag time.Duration

	mu    sync.Mutex
	cut   bool       // guarded by mu
	conns []net.Conn // guarded by mu
}

func (p *laggyPath) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return nil, errors.New("laggyPath: cut")
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	p.conns = append(p.conns, conn)
	return laggyConn{conn, p.lag}, nil
}

func (p *laggyPath) cutNow() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = true
	for _, c := range p.conns {
		c.Close()
	}
}

type laggyConn struct {
	net.Conn
	lag time.Duration
}

func (c laggyConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if n > 0 {
		time.Sleep(c.lag)
	}
	return n, err
}

// TestPartitionedHolderStopsBeforeLeaseExpires: the replica holding the
// refresh lease (a) is waiting on a slow authorization server when it
// loses Redis, just after a renewal that went through but whose answer
// came late (a lagging link). The lease in Redis expires ttl after that
// renewal ran; a waiting replica (b) then takes it and presents the same
// refresh token. The holder must have abandoned its request by then: the
// server (which answers a's request once another arrives, as a slow
// server does) would otherwise see the refresh token twice and revoke the
// grant. The holder gave up only at a renewal tick once ttl had passed
// since a renewal's answer arrived: up to a third of the lease after it
// expired, more with a late answer.
func TestPartitionedHolderStopsBeforeLeaseExpires(t *testing.T) {
	r := startRedis(t)
	as := newStrictAS(t, 60)
	mcp := newProtectedMCP(t, as, testserver.Options{})
	seed := as.seed()
	seed.Expiry = time.Now().Add(-time.Second) // due now
	const lease = 600 * time.Millisecond
	path := &laggyPath{lag: 60 * time.Millisecond}
	arrivedA, arrivedB := make(chan struct{}), make(chan struct{})
	var onceB sync.Once
	as.stall = func(req *http.Request) bool {
		if req.Header.Get("X-Replica") != "a" {
			onceB.Do(func() { close(arrivedB) })
			return true
		}
		close(arrivedA)
		select {
		case <-req.Context().Done():
			return false // a gave up: the server never processes it
		case <-arrivedB:
			return true // still open when b's arrives: both are processed
		}
	}
	newClient := func(id string, rdb redis.UniversalClient) *auth.Client {
		c, err := auth.New(auth.Config{ServerURL: mcp.URL, ClientID: "fleet", Store: newStore(t, rdb, redisstore.Options{LeaseTTL: lease}),
			HTTPClient: &http.Client{Transport: replicaHeader{id}, Timeout: 30 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	rdbA := redis.NewClient(&redis.Options{Addr: r.addr(), Dialer: path.dial, MaxRetries: -1})
	t.Cleanup(func() { rdbA.Close() })
	watch := r.client(t)
	a, b := newClient("a", rdbA), newClient("b", r.client(t))
	ctx := testCtx(t)
	mustOK(t, newStore(t, watch, redisstore.Options{}).SaveToken(ctx, canonical(mcp.URL), seed))
	errA := make(chan error, 1)
	go func() { _, err := a.Token(ctx); errA <- err }()
	select {
	case <-arrivedA:
	case <-ctx.Done():
		t.Fatal("a's refresh never reached the authorization server")
	}
	// Wait for a renewal of a's lease (its remaining time goes up), let
	// its late answer arrive, then cut a off from Redis.
	leaseKey := "conduit:lease:" + sha(canonical(mcp.URL))
	last := must(watch.PTTL(ctx, leaseKey).Result())
	for {
		pttl := must(watch.PTTL(ctx, leaseKey).Result())
		if pttl <= 0 {
			t.Fatalf("a's lease ended (PTTL %v) before it was renewed", pttl)
		}
		if pttl > last+50*time.Millisecond {
			break
		}
		last = pttl
		time.Sleep(2 * time.Millisecond)
	}
	time.Sleep(path.lag + 30*time.Millisecond)
	path.cutNow()
	tokB, errB := b.Token(ctx)
	if err := <-errA; !errors.Is(err, auth.ErrLeaseLost) {
		t.Errorf("a's Token = %v, want an error matching ErrLeaseLost", err)
	}
	refreshes, rejected, revoked, log := as.counts()
	if errB != nil || tokB == "" || tokB == seed.AccessToken {
		t.Errorf("b's Token = %q, %v; want a new token", tokB, errB)
	}
	if refreshes != 1 || rejected != 0 || revoked {
		t.Errorf("refreshes %v, invalid_grant = %d (revoked %v); want one refresh, by b: a's request was still open when b's came", log, rejected, revoked)
	}
}
