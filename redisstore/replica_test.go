package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/conduitmcp/conduit/transport"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/redisstore"
)

func TestMain(m *testing.M) {
	if cfg := os.Getenv(replicaEnv); cfg != "" {
		os.Exit(runReplica(cfg))
	}
	goleak.VerifyTestMain(m)
}

// warnCount is a slog.Handler counting warnings about stores, by
// message.
type warnCount struct {
	n  atomic.Int32
	mu sync.Mutex
	by map[string]int // guarded by mu
}

func (h *warnCount) Enabled(context.Context, slog.Level) bool { return true }
func (h *warnCount) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *warnCount) WithGroup(string) slog.Handler            { return h }
func (h *warnCount) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, "store") {
		h.n.Add(1)
		h.mu.Lock()
		if h.by == nil {
			h.by = map[string]int{}
		}
		h.by[r.Message]++
		h.mu.Unlock()
		fmt.Fprintln(os.Stderr, r.Time.Format("15:04:05.000"), r.Message)
	}
	return nil
}

// replicaHeader marks a replica's requests to the authorization server.
type replicaHeader struct{ id string }

func (h replicaHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Replica", h.id)
	return http.DefaultTransport.RoundTrip(r)
}

// runReplica is one replica of a fleet, in its own process: an
// auth.Client and a client.Client sharing tokens (and the caches) through
// Redis, Concurrency callers calling a tool until Duration passes. It
// prints a replicaReport.
func runReplica(cfgJSON string) int {
	var cfg replicaConfig
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	baseline := runtime.NumGoroutine()
	rep, err := replicaRun(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	transport.CloseIdleConnections()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > baseline && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	rep.Leaked = max(0, runtime.NumGoroutine()-baseline)
	json.NewEncoder(os.Stdout).Encode(rep)
	return 0
}

func replicaRun(cfg replicaConfig) (replicaReport, error) {
	rep := replicaReport{ID: cfg.ID}
	// No retries: a Redis that is down fails a call at once (see the README).
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	defer rdb.Close()
	store, err := redisstore.New(rdb, redisstore.Options{EncryptionKey: testKey, LeaseTTL: cfg.LeaseTTL})
	if err != nil {
		return rep, err
	}
	logs := &warnCount{}
	ac, err := auth.New(auth.Config{ServerURL: cfg.MCP, ClientID: "fleet", Store: store, RefreshSkew: cfg.RefreshSkew,
		HTTPClient: &http.Client{Transport: replicaHeader{cfg.ID}, Timeout: 30 * time.Second}, Logger: slog.New(logs)})
	if err != nil {
		return rep, err
	}
	ctx := context.Background()
	opts := []client.Option{client.WithAuth(client.Auth{Tokens: ac}), client.WithProtocol(client.Modern), client.WithLogger(slog.New(logs))}
	if cfg.Cache {
		opts = append(opts, client.WithCache(store))
	}
	c, err := client.Dial(ctx, cfg.MCP, opts...)
	if err != nil {
		return rep, fmt.Errorf("dial: %w", err)
	}
	if err := replicaCall(ctx, c, false, cfg.ID+"-first"); err != nil {
		return rep, fmt.Errorf("first call: %w", err)
	}
	fmt.Println("ready")
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := time.Now().Add(cfg.Duration)
	for i := range cfg.Concurrency {
		wg.Go(func() {
			for n := 0; time.Now().Before(stop); n++ {
				start := time.Now()
				err := replicaCall(ctx, c, cfg.Cache && n%2 == 1, fmt.Sprintf("%s-%d-%d", cfg.ID, i, n))
				d := time.Since(start)
				mu.Lock()
				rep.Calls++
				rep.MaxLatency = max(rep.MaxLatency, d)
				if err != nil {
					rep.Failures++
					if rep.FirstErr == "" {
						rep.FirstErr = err.Error()
					}
				}
				mu.Unlock()
				time.Sleep(cfg.Pause)
			}
		})
	}
	wg.Wait()
	rep.PoolConns = rdb.PoolStats().TotalConns
	rep.Warnings = int(logs.n.Load())
	logs.mu.Lock()
	rep.WarningsBy = logs.by
	logs.mu.Unlock()
	return rep, c.Close()
}

// replicaCall calls the echo tool, or lists the prompts (a cacheable
// result) when list is set. (Not the tools: a tools/list concurrent with
// tools/call races in client/tools.go, where toolRegistry.add rewrites a
// toolInfo that lookup handed out.)
func replicaCall(ctx context.Context, c *client.Client, list bool, text string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if list {
		for _, err := range c.Prompts(ctx) {
			if err != nil {
				return err
			}
		}
		return nil
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": text})
	if err != nil {
		return err
	}
	if res.IsError != nil && *res.IsError {
		return fmt.Errorf("tool error")
	}
	return nil
}
