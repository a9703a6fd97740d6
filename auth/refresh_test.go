package auth

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// authorized returns a client that completed the interactive flow.
func authorized(t *testing.T, s *testServer, store TokenStore) *Client {
	t.Helper()
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect, Store: store})
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatalf("initial authorization: %v", err)
	}
	return c
}

// TestConcurrent401sShareOneRefresh: the server invalidates the access
// token; N requests in flight all get 401 and all call Authorize at once.
// With a rotating refresh token, a second refresh would fail with
// invalid_grant and force a re-login: exactly one refresh must happen.
func TestConcurrent401sShareOneRefresh(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	ctx := testCtx(t)
	s.expireAccess()

	const n = 8
	var got401, recovered sync.WaitGroup
	got401.Add(n)
	recovered.Add(n)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			status, herr, err := send(ctx, c, s.mcpURL())
			got401.Done()
			if err != nil || status != 401 {
				recovered.Done()
				errs <- errors.Join(err, errors.New("want 401"))
				return
			}
			got401.Wait() // every request failed before anyone recovers
			err = c.Authorize(ctx, herr)
			recovered.Done()
			if err != nil {
				errs <- err
				return
			}
			// Retry only once every 401 was handled: a 401 handled after
			// the new token was already used cannot be told apart from a
			// rejection of that new token (see Client.Authorize).
			recovered.Wait()
			if status, _, err := send(ctx, c, s.mcpURL()); err != nil || status != 200 {
				errs <- errors.Join(err, errors.New("retry not 200"))
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes at the server = %d, want exactly 1", got)
	}
	if got := s.count("authorize"); got != 1 {
		t.Errorf("authorizations = %d, want 1 (no re-login)", got)
	}
}

// TestConcurrentExpiryShareOneRefresh: the client sees its token expire
// (clock moved forward) and N concurrent Token calls refresh once.
func TestConcurrentExpiryShareOneRefresh(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	ctx := testCtx(t)
	var mu sync.Mutex
	offset := 2 * time.Hour
	c.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(offset) }
	toks := concurrentTokens(t, ctx, 8, func(int) *Client { return c })
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
	for _, tok := range toks[1:] {
		if tok != toks[0] || tok == "" {
			t.Errorf("tokens differ or empty: %q", toks)
			break
		}
	}
}

// TestTwoClientsShareStore: two Client values (separate singleflights)
// share one FileStore; both see an expired token; the store's lock makes
// one refresh and the other adopt its result.
func TestTwoClientsShareStore(t *testing.T) {
	s := newTestServer(t, nil)
	store := &FileStore{Path: filepath.Join(tempDir(t), "tokens.json")}
	authorized(t, s, store)
	expireStored(t, store, s)
	ctx := testCtx(t)
	toks := concurrentTokens(t, ctx, 4, func(int) *Client {
		return mustNew(t, Config{ServerURL: s.mcpURL(), Store: store})
	})
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want 1", got)
	}
	for _, tok := range toks {
		if tok != toks[0] {
			t.Errorf("clients disagree: %q", toks)
		}
	}
}

// expireStored rewrites the stored token as expired.
func expireStored(t *testing.T, store TokenStore, s *testServer) {
	t.Helper()
	ctx := testCtx(t)
	key, _ := CanonicalResource(s.mcpURL())
	tok, err := store.LoadToken(ctx, key)
	if err != nil || tok == nil {
		t.Fatalf("stored token: %v %v", tok, err)
	}
	tok.Expiry = time.Now().Add(-time.Minute)
	tok.IssuedAt = time.Now().Add(-time.Hour)
	if err := store.SaveToken(ctx, key, tok); err != nil {
		t.Fatal(err)
	}
}

// TestCrossProcessRefresh re-executes the test binary as several
// processes sharing one FileStore with an expired token and a rotating
// refresh token: exactly one refresh happens and all processes end up with
// the same, valid token.
func TestCrossProcessRefresh(t *testing.T) {
	s, store := sharedFileStore(t)
	expireStored(t, store, s)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	const procs = 4
	type proc struct {
		cmd *exec.Cmd
		out bytes.Buffer
		in  *os.File
	}
	ps := make([]*proc, procs)
	for i := range ps {
		p := &proc{cmd: exec.Command(exe, "-test.run=^$")}
		p.cmd.Env = append(os.Environ(), helperEnv+"=1", "CONDUIT_AUTH_SERVER="+s.mcpURL(),
			"CONDUIT_AUTH_CLIENT=cli", "CONDUIT_AUTH_STORE="+store.Path)
		p.cmd.Stdout = &p.out
		p.cmd.Stderr = os.Stderr
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		p.cmd.Stdin, p.in = r, w
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r.Close()
		ps[i] = p
	}
	for _, p := range ps { // go: all processes refresh at once
		p.in.Close()
	}
	toks := map[string]bool{}
	for i, p := range ps {
		if err := p.cmd.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
		toks[p.out.String()] = true
	}
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refreshes = %d, want exactly 1 across %d processes", got, procs)
	}
	if len(toks) != 1 {
		t.Errorf("processes got different tokens: %v", toks)
	}
	// A new Client in this process finds the same token in the store.
	c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientID: "cli", Store: store})
	tok, err := c.Token(testCtx(t))
	if err != nil || !toks[tok] {
		t.Errorf("parent token %q (err %v), want the shared one", tok, err)
	}
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Error(err)
	}
}

// TestInvalidRefreshTokenReauthorizes: a refresh token the server no
// longer accepts leads to a new authorization, not a dead connection.
func TestInvalidRefreshTokenReauthorizes(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	s.mu.Lock()
	for _, rt := range s.refresh {
		rt.used = true
	}
	s.mu.Unlock()
	s.expireAccess()
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.count("authorize"); got != 2 {
		t.Errorf("authorizations = %d, want 2 (re-authorized)", got)
	}
	// Token with an expired token and a dead refresh token: "" (no error),
	// so the request goes out and its 401 triggers Authorize.
	c2 := authorized(t, s, nil)
	s.mu.Lock()
	for _, rt := range s.refresh {
		rt.used = true
	}
	s.mu.Unlock()
	c2.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	tok, err := c2.Token(testCtx(t))
	if tok != "" || err != nil {
		t.Errorf("Token = %q, %v; want empty, nil", tok, err)
	}
	if _, err := c2.Refresh(testCtx(t)); !errors.Is(err, ErrNoRefreshToken) {
		t.Errorf("Refresh after rejection: %v, want ErrNoRefreshToken", err)
	}
}

// TestPublicClientSecretExpiry: client_secret_expires_at concerns a
// client secret only; a public client registered with one in the past is
// still used to refresh, not registered and authorized again.
func TestPublicClientSecretExpiry(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.secretExpires = 1 })
	c := authorized(t, s, nil)
	s.expireAccess()
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if reg, auth, ref := s.count("register"), s.count("authorize"), s.count("refresh_token"); reg != 1 || auth != 1 || ref != 1 {
		t.Errorf("registrations, authorizations, refreshes = %d, %d, %d; want 1, 1, 1", reg, auth, ref)
	}
}

// TestNoRefreshTokenKeepsValidToken: without a refresh token, a token
// within RefreshSkew of its expiry is still sent until it expires: the
// request does not go out without credentials, and the user is not asked
// to authorize again before the token is actually refused.
func TestNoRefreshTokenKeepsValidToken(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.noRefresh = true })
	c := authorized(t, s, nil)
	ctx := testCtx(t)
	denied0 := s.count("mcp401")
	c.now = func() time.Time { return time.Now().Add(time.Hour - 30*time.Second) }
	if tok, err := c.Token(ctx); tok == "" || err != nil {
		t.Errorf("Token 30 s before expiry = %q, %v; want the token", tok, err)
	}
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got, denied := s.count("authorize"), s.count("mcp401")-denied0; got != 1 || denied != 0 {
		t.Errorf("authorizations = %d, 401s = %d; want 1 and 0", got, denied)
	}
	// Expired, it is no longer sent: the 401 leads to a new authorization.
	c.now = func() time.Time { return time.Now().Add(time.Hour + time.Second) }
	if tok, err := c.Token(ctx); tok != "" || err != nil {
		t.Errorf("Token after expiry = %q, %v; want none", tok, err)
	}
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.count("authorize"); got != 2 {
		t.Errorf("authorizations = %d, want 2", got)
	}
}

// TestRefreshDownKeepsValidToken: when the early refresh (within
// RefreshSkew) fails because the token endpoint is down, the token, still
// valid, is sent; once it has expired the failure is reported.
func TestRefreshDownKeepsValidToken(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	ctx := testCtx(t)
	held, _ := c.Token(ctx)
	s.mu.Lock()
	s.tokenDown = true
	s.mu.Unlock()
	at := func(d time.Duration) { c.now = func() time.Time { return time.Now().Add(d) } }
	at(time.Hour - 30*time.Second)
	for range 50 {
		if tok, err := c.Token(ctx); tok != held || err != nil {
			t.Fatalf("Token 30 s before expiry, token endpoint down = %q, %v; want the held token", tok, err)
		}
	}
	// A failed renewal is tried again after a pause, not at every call:
	// a busy client would send the failing endpoint a request per call.
	if got := s.count("refresh_token"); got != 1 {
		t.Errorf("refresh attempts in 50 calls = %d, want 1", got)
	}
	at(time.Hour - 28*time.Second)
	for range 50 {
		if tok, err := c.Token(ctx); tok != held || err != nil {
			t.Fatalf("Token 28 s before expiry, token endpoint down = %q, %v; want the held token", tok, err)
		}
	}
	if got := s.count("refresh_token"); got != 2 {
		t.Errorf("refresh attempts in 100 calls, 2 s apart = %d, want 2", got)
	}
	at(time.Hour + time.Second)
	if tok, err := c.Token(ctx); !errorsAs[*TokenError](err) {
		t.Errorf("Token after expiry, token endpoint down = %q, %v; want a *TokenError", tok, err)
	}
}

// TestServiceTokenEndpointDownKeepsValidToken: a service (no refresh
// token) re-obtains its token before it expires; while the token endpoint
// fails that, the token, still valid, is sent.
func TestServiceTokenEndpointDownKeepsValidToken(t *testing.T) {
	s := newTestServer(t, nil)
	s.addClient(&tClient{id: "svc", secret: "pw", method: "client_secret_basic"})
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw"})
	ctx := testCtx(t)
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	held, _ := c.Token(ctx)
	s.mu.Lock()
	s.tokenDown = true
	s.mu.Unlock()
	c.now = func() time.Time { return time.Now().Add(time.Hour - 30*time.Second) }
	if tok, err := c.Token(ctx); tok != held || err != nil {
		t.Fatalf("Token 30 s before expiry, token endpoint down = %q, %v; want the held token", tok, err)
	}
	c.now = func() time.Time { return time.Now().Add(time.Hour + time.Second) }
	if tok, err := c.Token(ctx); !errorsAs[*TokenError](err) {
		t.Errorf("Token after expiry, token endpoint down = %q, %v; want a *TokenError", tok, err)
	}
	s.mu.Lock()
	s.tokenDown = false
	s.mu.Unlock()
	if tok, err := c.Token(ctx); tok == "" || tok == held || err != nil {
		t.Errorf("Token with the token endpoint back = %q, %v; want a new token", tok, err)
	}
}

func TestRefreshKeepsResource(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	if _, err := c.Refresh(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	last := s.forms[len(s.forms)-1]
	s.mu.Unlock()
	if last.Get("grant_type") != "refresh_token" || last.Get("resource") != s.mcpURL() {
		t.Errorf("refresh form %v lacks resource", last)
	}
}

// TestNewAuthorizationServer: when the resource's metadata starts naming
// another authorization server, the old token is not refreshed at the old
// server; the client registers with the new one and authorizes there.
func TestNewAuthorizationServer(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	newAS := newTestServer(t, nil)
	s.expireAccess()
	// The PRM now names the new AS, and /mcp accepts its tokens.
	s.mu.Lock()
	s.altIssuer = newAS.issuer()
	s.trusted = newAS
	s.mu.Unlock()
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.count("refresh_token"); got != 0 {
		t.Errorf("refreshed %d times at the old server", got)
	}
	if newAS.count("register") != 1 || newAS.count("authorization_code") != 1 {
		t.Errorf("new AS counts %v", newAS.counts)
	}
}

// concurrentTokens calls Token on n clients (client(i) gives the i-th, on
// the test goroutine) at once and returns the tokens in order.
func concurrentTokens(t *testing.T, ctx context.Context, n int, client func(i int) *Client) []string {
	t.Helper()
	var wg sync.WaitGroup
	toks := make([]string, n)
	for i := range toks {
		c := client(i)
		wg.Go(func() {
			tok, err := c.Token(ctx)
			if err != nil {
				t.Error(err)
			}
			toks[i] = tok
		})
	}
	wg.Wait()
	return toks
}

// TestTokenLifetimeFromPeer: a token response whose expires_in is not a
// usable lifetime (negative, or past what a time.Duration holds, which
// x/oauth2 multiplies into one unchecked in form-encoded responses) must
// not yield a token that is stale on arrival: such a token would be
// refreshed, or obtained again, on every request.
func TestTokenLifetimeFromPeer(t *testing.T) {
	tests := []struct {
		name      string
		method    Method
		form      bool
		expiresIn any
	}{
		{"json negative", ClientCredentials, false, -1},
		{"json negative refresh", AuthorizationCode, false, -1},
		{"json below int32", ClientCredentials, false, -(int64(1) << 32) + 1},
		{"form negative", ClientCredentials, true, -1},
		{"form negative refresh", AuthorizationCode, true, -1},
		{"form wraps negative", ClientCredentials, true, "9223372037"},
		{"form wraps positive", ClientCredentials, true, "18446744074"},
		{"form beyond int64", ClientCredentials, true, "99999999999999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) { s.expiresIn, s.formTokens = tt.expiresIn, tt.form })
			s.addClient(&tClient{id: "svc", secret: "pw", method: "client_secret_basic"})
			cfg := Config{ServerURL: s.mcpURL(), Method: tt.method, Interaction: autoApprove(t), RedirectURL: testRedirect}
			if tt.method == ClientCredentials {
				cfg.ClientID, cfg.ClientSecret = "svc", "pw"
			}
			c := mustNew(t, cfg)
			ctx := testCtx(t)
			if err := call(ctx, c, s.mcpURL()); err != nil {
				t.Fatal(err)
			}
			grant := map[Method]string{ClientCredentials: "client_credentials", AuthorizationCode: "authorization_code"}[tt.method]
			if got := s.count(grant); got != 1 {
				t.Fatalf("%s grants = %d, want 1", grant, got)
			}
			// A minute later the token is still used as it is, until the
			// server refuses it.
			c.now = func() time.Time { return time.Now().Add(time.Minute) }
			for range 3 {
				if err := call(ctx, c, s.mcpURL()); err != nil {
					t.Fatal(err)
				}
			}
			if got, refreshes := s.count(grant), s.count("refresh_token"); got != 1 || refreshes != 0 {
				t.Errorf("after 3 more requests: %s grants = %d, refreshes = %d; want 1 and 0", grant, got, refreshes)
			}
		})
	}
}

// TestSharedRefreshSurvivesFirstCaller: two callers need a refresh,
// which waits for the lease another holder has (a replica on a slow
// authorization server). The caller that started the shared refresh
// gives up (its context ends) while the other, whose context is live,
// waits. The second caller must not fail with the first one's context
// error: it goes on with a refresh of its own.
func TestSharedRefreshSurvivesFirstCaller(t *testing.T) {
	var as *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token",
			"authorization_endpoint": as.URL + "/authorize", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		if r.FormValue("refresh_token") != "rt-1" {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		writeJSON(w, 200, map[string]any{"access_token": "at-2", "refresh_token": "rt-2", "token_type": "Bearer", "expires_in": 3600})
	})
	as = httptest.NewServer(mux)
	t.Cleanup(as.Close)

	store := &MemoryStore{}
	c := mustNew(t, Config{ServerURL: "http://127.0.0.1:1/mcp", ClientID: "app", Store: store})
	ctx := testCtx(t)
	if err := store.SaveToken(ctx, c.key, &Token{AccessToken: "at-1", RefreshToken: "rt-1", TokenType: "Bearer",
		IssuedAt: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour), Issuer: as.URL, Resource: c.key}); err != nil {
		t.Fatal(err)
	}
	if _, err := store.AcquireLease(ctx, c.key, "another holder"); err != nil {
		t.Fatal(err)
	}
	firstCtx, leave := context.WithCancel(ctx)
	firstDone := make(chan error, 1)
	go func() { _, err := c.Token(firstCtx); firstDone <- err }()
	type result struct {
		tok string
		err error
	}
	second := make(chan result, 1)
	time.Sleep(50 * time.Millisecond) // the first caller's refresh waits for the lease
	go func() { tok, err := c.Token(ctx); second <- result{tok, err} }()
	time.Sleep(50 * time.Millisecond) // the second caller joins it
	leave()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("first caller's Token = %v, want context.Canceled", err)
	}
	store.ReleaseLease(ctx, c.key, "another holder")
	var r result
	select {
	case r = <-second:
	case <-time.After(10 * time.Second):
		t.Fatal("second caller's Token still waiting 10 s after the first caller left")
	}
	if r.err != nil || r.tok != "at-2" {
		t.Errorf("second caller's Token = %q, %v; want the token of a refresh of its own, at-2", r.tok, r.err)
	}
}

// TestRefreshOutlivesCallerOnceSent: the caller that started a refresh
// gives up (its context ends) while the authorization server, slow, has
// the refresh token in hand; the server rotates it all the same. The
// token request must go on to its answer and the new token be saved: a
// request abandoned there spends the stored refresh token, and the next
// refresh presents a used one, which a rotating server answers with
// invalid_grant (a new authorization, by the user).
func TestRefreshOutlivesCallerOnceSent(t *testing.T) {
	arrived, answer := make(chan struct{}, 4), make(chan struct{})
	var as *httptest.Server
	var mu sync.Mutex
	used := map[string]bool{} // refresh tokens presented; guarded by mu
	next := 1                 // guarded by mu
	rejected := 0             // guarded by mu
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": as.URL, "token_endpoint": as.URL + "/token",
			"authorization_endpoint": as.URL + "/authorize", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		rt := r.FormValue("refresh_token")
		mu.Lock()
		if used[rt] || rt != fmt.Sprintf("rt-%d", next) {
			rejected++
			mu.Unlock()
			oauthErr(w, 400, "invalid_grant")
			return
		}
		used[rt] = true
		next++
		n := next
		mu.Unlock()
		arrived <- struct{}{}
		if n == 2 {
			<-answer // slow: the first refresh is answered only once its caller has left
		}
		writeJSON(w, 200, map[string]any{"access_token": fmt.Sprintf("at-%d", n), "refresh_token": fmt.Sprintf("rt-%d", n),
			"token_type": "Bearer", "expires_in": 3600})
	})
	as = httptest.NewServer(mux)
	t.Cleanup(as.Close)

	store := &MemoryStore{}
	c := mustNew(t, Config{ServerURL: "http://127.0.0.1:1/mcp", ClientID: "app", Store: store})
	ctx := testCtx(t)
	if err := store.SaveToken(ctx, c.key, &Token{AccessToken: "at-1", RefreshToken: "rt-1", TokenType: "Bearer",
		IssuedAt: time.Now().Add(-2 * time.Hour), Expiry: time.Now().Add(-time.Hour), Issuer: as.URL, Resource: c.key}); err != nil {
		t.Fatal(err)
	}
	callerCtx, leave := context.WithCancel(ctx)
	left := make(chan error, 1)
	go func() { _, err := c.Token(callerCtx); left <- err }()
	<-arrived // the server holds rt-1 and has rotated it
	leave()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("Token of the caller that left = %v, want context.Canceled", err)
	}
	close(answer)
	if tok, err := c.Token(ctx); err != nil || tok != "at-2" {
		t.Errorf("next Token = %q, %v; want at-2, the answer to the refresh its caller left", tok, err)
	}
	var saved *Token
	for range 500 {
		if saved, _ = store.LoadToken(ctx, c.key); saved != nil && saved.RefreshToken == "rt-2" {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if saved == nil || saved.RefreshToken != "rt-2" {
		t.Errorf("stored token = %v, want the rotated one (refresh token rt-2)", saved)
	}
	mu.Lock()
	defer mu.Unlock()
	if rejected != 0 {
		t.Errorf("invalid_grant answers = %d, want 0: a spent refresh token was presented", rejected)
	}
}
