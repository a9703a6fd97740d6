package redisstore_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server process of a test, on a loopback port.
type redisServer struct {
	t    testing.TB
	bin  string
	dir  string
	port int
	args []string
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
}

// startRedis starts a redis-server on a free loopback port, without
// persistence, and stops it when the test ends. Without the binary the
// test is skipped, except in CI (CI=true), where it fails.
func startRedis(t testing.TB, extra ...string) *redisServer {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("redis-server not found in CI (.ci/run installs it): %v", err)
		}
		t.Skip("redis-server not installed (apt-get install redis-server); skipping the tests against a real Redis")
	}
	r := &redisServer{t: t, bin: bin, dir: t.TempDir(), port: freePort(t), args: extra}
	r.start()
	t.Cleanup(r.stop)
	return r
}

func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func (r *redisServer) addr() string { return "127.0.0.1:" + strconv.Itoa(r.port) }

// start runs the server (again, after stop) on the same port and
// directory, and waits until it answers PING.
func (r *redisServer) start() {
	r.t.Helper()
	args := append([]string{"--port", strconv.Itoa(r.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
		"--dir", r.dir, "--logfile", filepath.Join(r.dir, "redis.log")}, r.args...)
	r.cmd = exec.Command(r.bin, args...)
	if err := r.cmd.Start(); err != nil {
		r.t.Fatalf("starting redis-server: %v", err)
	}
	r.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { cmd.Wait(); close(done) }(r.cmd, r.done)
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(r.dir, "redis.log"))
			r.t.Fatalf("redis-server on %s does not answer: %v\n%s", r.addr(), err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// stop kills the server (its data is lost unless saved first) and waits
// for it.
func (r *redisServer) stop() {
	if r.cmd == nil {
		return
	}
	r.cmd.Process.Kill()
	<-r.done
	r.cmd = nil
}

// restart shuts the server down (SHUTDOWN SAVE: it saves every write it
// acknowledged, then exits), waits down, and starts it again on the same
// port with the saved data: a Redis with persistence restarted.
func (r *redisServer) restart(down time.Duration) {
	r.t.Helper()
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1})
	c.ShutdownSave(context.Background()) // the connection closes: no answer
	c.Close()
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
		r.t.Fatal("redis-server did not exit after SHUTDOWN SAVE")
	}
	r.cmd = nil
	time.Sleep(down)
	r.start()
}

// client returns a go-redis client of the server, closed with the test.
func (r *redisServer) client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: r.addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}
