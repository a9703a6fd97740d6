package redisstore_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/redisstore"
)

// exercise runs every kind of operation of a Store through rdb: tokens,
// the lease, results with their index script, era records.
func exercise(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := testCtx(t)
	s := newStore(t, rdb, redisstore.Options{LeaseTTL: time.Second})
	mustOK(t, s.SaveToken(ctx, "https://mcp.example", &auth.Token{AccessToken: "at", RefreshToken: "rt"}))
	if tok, err := s.LoadToken(ctx, "https://mcp.example"); err != nil || tok == nil || tok.RefreshToken != "rt" {
		t.Errorf("LoadToken = %v, %v", tok, err)
	}
	if _, err := s.AcquireLease(ctx, "https://mcp.example", "me"); err != nil {
		t.Fatalf("AcquireLease: %v", err)
	}
	mustOK(t, s.RenewLease(ctx, "https://mcp.example", "me"))
	mustOK(t, s.ReleaseLease(ctx, "https://mcp.example", "me"))
	exp := time.Now().Add(time.Minute)
	for _, srv := range []string{"server-a", "server-b", "server-c"} { // different slots
		k := cache.Key{Server: srv, Partition: "public", Method: "tools/list"}
		mustOK(t, s.StoreResult(ctx, k, cache.Entry{Result: []byte(`{}`), Expires: exp, Scope: "public"}))
		if _, ok, err := s.LoadResult(ctx, k); !ok || err != nil {
			t.Errorf("LoadResult(%s) = %v, %v", srv, ok, err)
		}
		mustOK(t, s.DeleteResults(ctx, cache.Selector{Server: srv}))
		if _, ok, _ := s.LoadResult(ctx, k); ok {
			t.Errorf("entry of %s survived DeleteResults", srv)
		}
	}
	mustOK(t, s.StoreEra(ctx, "k", cache.EraRecord{Era: negotiation.EraLegacy}))
	if _, ok, err := s.LoadEra(ctx, "k"); !ok || err != nil {
		t.Errorf("LoadEra = %v, %v", ok, err)
	}
}

// TestCluster: a one-node Redis Cluster holding every slot still refuses
// commands and scripts across slots (CROSSSLOT), so it checks that the
// Store's multi-key operations keep to one slot (its hash tags), through
// go-redis's cluster client.
func TestCluster(t *testing.T) {
	r := startRedis(t, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf")
	ctx := testCtx(t)
	admin := r.client(t)
	mustOK(t, admin.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", 0, 16383).Err())
	deadline := time.Now().Add(10 * time.Second)
	for {
		info, err := admin.ClusterInfo(ctx).Result()
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cluster not ok: %v %s", err, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{r.addr()}, IsClusterMode: true})
	t.Cleanup(func() { rdb.Close() })
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("universal client is a %T, want a cluster client", rdb)
	}
	exercise(t, rdb)
}

// TestSentinel: a Sentinel monitoring the master; go-redis's universal
// client with MasterName asks it for the master and the Store works
// through it.
func TestSentinel(t *testing.T) {
	master := startRedis(t)
	dir := t.TempDir()
	port := freePort(t)
	conf := filepath.Join(dir, "sentinel.conf")
	mustOK(t, os.WriteFile(conf, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\nsentinel monitor fleet 127.0.0.1 %d 1\n",
		port, dir, filepath.Join(dir, "sentinel.log"), master.port)), 0o600))
	cmd := exec.Command(master.bin, conf, "--sentinel")
	mustOK(t, cmd.Start())
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{fmt.Sprintf("127.0.0.1:%d", port)}, MasterName: "fleet"})
	t.Cleanup(func() { rdb.Close() })
	ctx := testCtx(t)
	deadline := time.Now().Add(10 * time.Second)
	for rdb.Ping(ctx).Err() != nil {
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "sentinel.log"))
			t.Fatalf("no master through the sentinel: %v\n%s", rdb.Ping(ctx).Err(), log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	exercise(t, rdb)
	if n, _ := master.client(t).Exists(ctx, "conduit:era:"+sha("k")).Result(); n != 1 {
		t.Error("the era record did not land on the master")
	}
}
