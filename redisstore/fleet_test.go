package redisstore_test

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/internal/testserver"
)

// strictAS is a rotation-strict OAuth authorization server: each refresh
// token works once; presenting a used one revokes the grant (as OAuth 2.1
// recommends), so that every later refresh fails too. It counts what a
// fleet does to it.
type strictAS struct {
	*httptest.Server
	lifetime int // expires_in of access tokens, seconds

	mu        sync.Mutex
	refresh   map[string]bool      // refresh token → used; guarded by mu
	access    map[string]time.Time // access token → expiry; guarded by mu
	revoked   bool                 // a used refresh token came back
	refreshes int                  // successful refreshes
	rejected  int                  // invalid_grant answers
	log       []refreshRecord      // each successful refresh
	// stall, when set, is called with the request before a refresh is
	// processed, and may hold it; false drops it unprocessed.
	stall func(r *http.Request) bool
}

func newStrictAS(t *testing.T, lifetime int) *strictAS {
	as := &strictAS{lifetime: lifetime, refresh: map[string]bool{}, access: map[string]time.Time{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{
			"issuer": as.URL, "token_endpoint": as.URL + "/token", "authorization_endpoint": as.URL + "/authorize",
			"code_challenge_methods_supported": []string{"S256"}, "grant_types_supported": []string{"refresh_token"},
		})
	})
	mux.HandleFunc("POST /token", as.token)
	as.Server = httptest.NewServer(mux)
	t.Cleanup(as.Close)
	return as
}

// grant issues a new access and refresh token; mu is held.
func (as *strictAS) grantLocked() map[string]any {
	at, rt := "at-"+rand.Text(), "rt-"+rand.Text()
	as.access[at] = time.Now().Add(time.Duration(as.lifetime) * time.Second)
	as.refresh[rt] = false
	return map[string]any{"access_token": at, "refresh_token": rt, "token_type": "Bearer", "expires_in": as.lifetime}
}

// seed returns the grant a user obtained by logging in once.
func (as *strictAS) seed() *auth.Token {
	as.mu.Lock()
	defer as.mu.Unlock()
	g := as.grantLocked()
	return &auth.Token{AccessToken: g["access_token"].(string), RefreshToken: g["refresh_token"].(string), TokenType: "Bearer",
		Expiry: time.Now().Add(time.Duration(as.lifetime) * time.Second), IssuedAt: time.Now(), Issuer: as.URL}
}

func (as *strictAS) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	if r.PostForm.Get("grant_type") != "refresh_token" {
		http.Error(w, `{"error":"unsupported_grant_type"}`, http.StatusBadRequest)
		return
	}
	if as.stall != nil && !as.stall(r) {
		return
	}
	as.mu.Lock()
	defer as.mu.Unlock()
	rt := r.PostForm.Get("refresh_token")
	used, known := as.refresh[rt]
	if !known || used || as.revoked {
		if used {
			as.revoked = true
		}
		as.rejected++
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":"invalid_grant"}`))
		return
	}
	as.refresh[rt] = true
	as.refreshes++
	as.log = append(as.log, refreshRecord{time.Now(), r.Header.Get("X-Replica")})
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(as.grantLocked())
}

func (as *strictAS) valid(at string) bool {
	as.mu.Lock()
	defer as.mu.Unlock()
	exp, ok := as.access[at]
	return ok && time.Now().Before(exp)
}

func (as *strictAS) counts() (refreshes, rejected int, revoked bool, log []refreshRecord) {
	as.mu.Lock()
	defer as.mu.Unlock()
	return as.refreshes, as.rejected, as.revoked, append([]refreshRecord(nil), as.log...)
}

// refreshRecord is a successful refresh: when, and by which replica.
type refreshRecord struct {
	At      time.Time
	Replica string
}

func (r refreshRecord) String() string { return r.At.Format("15:04:05.000") + " " + r.Replica }

// protectedMCP is an MCP server (internal/testserver over HTTP) that
// answers 401 to any request without an access token the AS issued and
// that has not expired.
type protectedMCP struct {
	*httptest.Server
	srv *testserver.Server

	mu           sync.Mutex
	unauthorized int // guarded by mu
}

func newProtectedMCP(t *testing.T, as *strictAS, o testserver.Options) *protectedMCP {
	m := &protectedMCP{srv: testserver.New(o)}
	h := m.srv.Handler()
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !as.valid(at) {
			m.mu.Lock()
			m.unauthorized++
			m.mu.Unlock()
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { m.Close(); m.srv.Close() })
	return m
}

// replicaEnv names the environment variable that makes the test binary a
// fleet replica (see runReplica); its value is the replicaConfig as JSON.
const replicaEnv = "CONDUIT_FLEET_REPLICA"

// replicaConfig tells a replica what to do.
type replicaConfig struct {
	ID          string
	Redis       string
	MCP         string
	Concurrency int           // concurrent callers
	Duration    time.Duration // how long they call
	Pause       time.Duration // between one caller's calls
	LeaseTTL    time.Duration
	RefreshSkew time.Duration
	Cache       bool // share the response cache (calls list tools too)
}

// replicaReport is what a replica prints when done.
type replicaReport struct {
	ID         string
	Calls      int
	Failures   int
	FirstErr   string
	MaxLatency time.Duration
	Warnings   int            // log lines at warning level (store failures)
	WarningsBy map[string]int // the same, by message
	Leaked     int            // goroutines left after closing everything
	PoolConns  uint32
}

// fleet runs replicas of the test binary.
type fleet struct {
	t     *testing.T
	mu    sync.Mutex
	procs map[string]*exec.Cmd // guarded by mu
	outs  map[string]*syncBuffer
}

// syncBuffer is a replica's stdout: "ready" once its first call
// succeeded, then its report.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder // guarded by mu
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// waitReady waits until every replica made its first call.
func (f *fleet) waitReady(timeout time.Duration) {
	f.t.Helper()
	deadline := time.Now().Add(timeout)
	for id, out := range f.outs {
		for !strings.HasPrefix(out.String(), "ready\n") {
			if time.Now().After(deadline) {
				f.t.Fatalf("replica %s not ready after %v", id, timeout)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// start starts one replica per config.
func startFleet(t *testing.T, cfgs []replicaConfig) *fleet {
	f := &fleet{t: t, procs: map[string]*exec.Cmd{}, outs: map[string]*syncBuffer{}}
	for _, c := range cfgs {
		b, _ := json.Marshal(c)
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), replicaEnv+"="+string(b))
		out, errOut := &syncBuffer{}, &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, errOut
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting replica %s: %v", c.ID, err)
		}
		f.procs[c.ID], f.outs[c.ID] = cmd, out
		t.Cleanup(func() {
			cmd.Process.Kill()
			cmd.Wait()
			if t.Failed() && errOut.String() != "" {
				t.Logf("replica %s stderr:\n%s", c.ID, errOut.String())
			}
		})
	}
	return f
}

// kill SIGKILLs replica id.
func (f *fleet) kill(id string) {
	f.mu.Lock()
	cmd := f.procs[id]
	f.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
	}
}

// wait waits for every replica and returns the reports of those that
// finished (a killed one has none).
func (f *fleet) wait(timeout time.Duration) map[string]replicaReport {
	f.t.Helper()
	reports := map[string]replicaReport{}
	deadline := time.AfterFunc(timeout, func() {
		for id := range f.procs {
			f.kill(id)
		}
	})
	defer deadline.Stop()
	for id, cmd := range f.procs {
		err := cmd.Wait()
		var r replicaReport
		out := strings.TrimPrefix(f.outs[id].String(), "ready\n")
		if jerr := json.Unmarshal([]byte(out), &r); jerr == nil && err == nil {
			reports[id] = r
		}
	}
	return reports
}
