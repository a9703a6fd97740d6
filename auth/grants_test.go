package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/transport"
)

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestClientCredentials(t *testing.T) {
	key := newKey(t)
	tests := []struct {
		name   string
		client *tClient
		cfg    Config
	}{
		{"client_secret_basic", &tClient{id: "svc", secret: "pw", method: "client_secret_basic"}, Config{ClientID: "svc", ClientSecret: "pw"}},
		{"client_secret_post", &tClient{id: "svc", secret: "pw", method: "client_secret_post"}, Config{ClientID: "svc", ClientSecret: "pw", AuthMethod: ClientSecretPost}},
		{"private_key_jwt", &tClient{id: "svc", method: "private_key_jwt", pub: key.Public()}, Config{ClientID: "svc", PrivateKey: key, KeyID: "k1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) { s.prmScopes = []string{"tools"} })
			s.addClient(tt.client)
			cfg := tt.cfg
			cfg.ServerURL, cfg.Method = s.mcpURL(), ClientCredentials
			c := mustNew(t, cfg)
			ctx := testCtx(t)
			if err := call(ctx, c, s.mcpURL()); err != nil {
				t.Fatal(err)
			}
			if got := s.count("client_credentials"); got != 1 {
				t.Errorf("client_credentials grants = %d", got)
			}
			// Expiry: a service re-obtains its token by itself (no 401).
			c.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
			if tok, err := c.Token(ctx); err != nil || tok == "" {
				t.Fatalf("Token after expiry = %q, %v", tok, err)
			}
			if got := s.count("client_credentials"); got != 2 {
				t.Errorf("client_credentials grants after expiry = %d, want 2", got)
			}
			s.mu.Lock()
			f := s.forms[len(s.forms)-1]
			s.mu.Unlock()
			if f.Get("resource") != s.mcpURL() || f.Get("scope") != "tools" {
				t.Errorf("form %v lacks resource or scope", f)
			}
		})
	}
}

func TestPrivateKeyJWTWrongKeyRejected(t *testing.T) {
	s := newTestServer(t, nil)
	s.addClient(&tClient{id: "svc", method: "private_key_jwt", pub: newKey(t).Public()})
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", PrivateKey: newKey(t)})
	err := call(testCtx(t), c, s.mcpURL())
	te, ok := errors.AsType[*TokenError](err)
	if !ok || te.Code != "invalid_client" {
		t.Fatalf("err = %v, want invalid_client", err)
	}
}

func TestDeviceFlowSlowDown(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.deviceSlow = 1; s.devicePending = 2 })
	var mu sync.Mutex
	var shown []DeviceAuthorization
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode,
		DevicePrompter: DevicePrompterFunc(func(_ context.Context, da DeviceAuthorization) error {
			mu.Lock()
			defer mu.Unlock()
			shown = append(shown, da)
			return nil
		})})
	var waits []int64
	c.pollUnit = time.Millisecond
	c.onPoll = func(i int64) { waits = append(waits, i) }
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	// interval 1, then slow_down adds 5 for this and all later polls.
	if diff := cmp.Diff([]int64{1, 6, 6, 6}, waits); diff != "" {
		t.Errorf("poll intervals (-want +got):\n%s", diff)
	}
	if len(shown) != 1 || shown[0].UserCode != "WDJB-MJHT" || !strings.HasSuffix(shown[0].VerificationURI, "/activate") {
		t.Errorf("shown = %+v", shown)
	}
	if s.count("register") != 1 || s.regs[0]["application_type"] != "native" {
		t.Errorf("device client registration %v", s.regs)
	}
}

// TestDeviceFlowInterval: the server's polling interval is a minimum
// (RFC 8628 §3.5): one longer than the cap is capped, never replaced by a
// shorter one.
func TestDeviceFlowInterval(t *testing.T) {
	tests := []struct {
		interval any
		want     int64
	}{
		{nil, defaultDeviceInterval},
		{0, defaultDeviceInterval},
		{-3, defaultDeviceInterval},
		{7, 7},
		{maxDeviceInterval, maxDeviceInterval},
		{maxDeviceInterval + 1, maxDeviceInterval},
		{int64(1) << 62, maxDeviceInterval},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.interval), func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) { s.deviceAuth = map[string]any{"interval": tt.interval} })
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode, DevicePrompter: PrintDevice(&strings.Builder{})})
			c.pollUnit = time.Microsecond
			var waits []int64
			c.onPoll = func(i int64) { waits = append(waits, i) }
			if err := call(testCtx(t), c, s.mcpURL()); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]int64{tt.want}, waits); diff != "" {
				t.Errorf("poll intervals (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeviceFlowLifetime: a device code's expires_in past what a
// time.Duration holds (x/oauth2 multiplies it into one unchecked) is
// capped, not wrapped around into a code expired before the first poll or
// within a second; one not positive means the default lifetime.
func TestDeviceFlowLifetime(t *testing.T) {
	tests := []struct {
		expiresIn any
		want      time.Duration // lifetime shown, at least
	}{
		{600, 590 * time.Second},
		{-5, 0}, // unknown: no expiry shown
		{9223372037, 60 * 365 * 24 * time.Hour},
		{18446744074, 60 * 365 * 24 * time.Hour},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.expiresIn), func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) {
				s.devicePending = 2
				s.deviceAuth = map[string]any{"expires_in": tt.expiresIn}
			})
			var shown []DeviceAuthorization
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode,
				DevicePrompter: DevicePrompterFunc(func(_ context.Context, da DeviceAuthorization) error {
					shown = append(shown, da)
					return nil
				})})
			c.pollUnit = 200 * time.Millisecond
			if err := call(testCtx(t), c, s.mcpURL()); err != nil {
				t.Fatal(err)
			}
			if len(shown) != 1 {
				t.Fatalf("shown %d device authorizations, want 1", len(shown))
			}
			switch exp := shown[0].Expiry; {
			case tt.want == 0 && !exp.IsZero():
				t.Errorf("expiry shown = %v, want none", exp)
			case tt.want > 0 && time.Until(exp) < tt.want:
				t.Errorf("expiry shown = %v, want %v from now at least", exp, tt.want)
			}
		})
	}
}

func TestDeviceFlowCanceled(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.devicePending = 1 << 20 })
	ctx, cancel := context.WithCancel(testCtx(t))
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode, DevicePrompter: PrintDevice(&strings.Builder{})})
	c.pollUnit = time.Millisecond
	polls := 0
	c.onPoll = func(int64) {
		if polls++; polls == 3 {
			cancel()
		}
	}
	if err := call(ctx, c, s.mcpURL()); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

func TestJWTBearer(t *testing.T) {
	wk := newKey(t)
	s := newTestServer(t, func(s *testServer) { s.workloadKey = wk.Public() })
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: JWTBearer,
		Assertion: func(_ context.Context, aud string) (string, error) {
			return signJWT(wk, "", "JWT", false, map[string]any{"iss": "workload", "sub": "spiffe://x/y", "aud": aud, "exp": time.Now().Add(time.Minute).Unix()})
		}})
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.count(jwtBearerGrantType); got != 1 {
		t.Errorf("jwt-bearer grants = %d", got)
	}
}

func TestEnterpriseManagedTokenExchange(t *testing.T) {
	idp := newKey(t)
	s := newTestServer(t, func(s *testServer) { s.idpKey = idp })
	s.addClient(&tClient{id: "mcp-client", secret: "pw", method: "client_secret_basic"})
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: TokenExchange, ClientID: "mcp-client", ClientSecret: "pw",
		TokenExchange: &TokenExchangeConfig{
			TokenEndpoint: s.URL + "/idp/token", ClientID: "idp-client",
			SubjectToken: func(context.Context) (string, error) { return "id-token-alice", nil },
		}})
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if s.count("idp-"+tokenExchangeGrantType) != 1 || s.count(jwtBearerGrantType) != 1 {
		t.Errorf("counts = %v", s.counts)
	}
}

func TestDPoP(t *testing.T) {
	for _, nonce := range []bool{false, true} {
		t.Run(map[bool]string{false: "without nonce", true: "with server nonce"}[nonce], func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) { s.dpop = true; s.dpopNonce = nonce })
			s.addClient(&tClient{id: "svc", secret: "pw", method: "client_secret_basic"})
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw", DPoPKey: newKey(t)})
			ctx := testCtx(t)
			// Obtain the token (the token endpoint demands DPoP, and a nonce).
			if err := c.Authorize(ctx, (&transportHTTPError401{}).err(s)); err != nil {
				t.Fatal(err)
			}
			c.mu.Lock()
			typ := c.tok.TokenType
			c.mu.Unlock()
			if typ != "DPoP" {
				t.Fatalf("token type %q", typ)
			}
			if _, err := c.Token(ctx); err == nil {
				t.Error("Token handed out a DPoP-bound token as a bearer token")
			}
			hc := &httpClient{rt: c.RoundTripper(nil)}
			for i := range 2 {
				status, err := hc.post(ctx, s.mcpURL())
				if err != nil || status != 200 {
					t.Fatalf("request %d: status %d, %v", i, status, err)
				}
			}
			s.mu.Lock()
			last := s.mcpAuth[len(s.mcpAuth)-1]
			s.mu.Unlock()
			if !strings.HasPrefix(last, "DPoP ") {
				t.Errorf("Authorization = %q", last)
			}
			// The HeaderFunc path signs proofs too (the nonce learned by
			// the RoundTripper is reused).
			if status, _, err := send(ctx, c, s.mcpURL()); err != nil || status != 200 {
				t.Errorf("Header path: status %d, %v", status, err)
			}
		})
	}
}

// TestDCRPrivateKeyJWT: a service without pre-registered credentials
// registers its public key (jwks) and authenticates with private_key_jwt.
// TestDPoPNonceOfRetryKept: the RoundTripper records the DPoP-Nonce of
// the answer to its nonce retry too, so that with a server giving a new
// nonce in every answer the next request is not refused again.
func TestDPoPNonceOfRetryKept(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.dpop, s.dpopNonce = true, true })
	s.addClient(&tClient{id: "svc", secret: "pw", method: "client_secret_basic"})
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw", DPoPKey: newKey(t)})
	ctx := testCtx(t)
	if err := c.Authorize(ctx, (&transportHTTPError401{}).err(s)); err != nil {
		t.Fatal(err)
	}
	s.mu.Lock()
	s.rotateNonce = true
	s.mu.Unlock()
	// The Header path does not see the answer's nonce: the RoundTripper's
	// first request is refused once and retried.
	if status, _, err := send(ctx, c, s.mcpURL()); err != nil || status != 200 {
		t.Fatalf("Header path: status %d, %v", status, err)
	}
	hc := &httpClient{rt: c.RoundTripper(nil)}
	for i := range 3 {
		if status, err := hc.post(ctx, s.mcpURL()); err != nil || status != 200 {
			t.Fatalf("request %d: status %d, %v", i, status, err)
		}
	}
	s.mu.Lock()
	n := len(s.mcpAuth)
	s.mu.Unlock()
	if n != 5 {
		t.Errorf("requests at the server = %d, want 5 (1, then 2, then 1 and 1)", n)
	}
}

func TestDCRPrivateKeyJWT(t *testing.T) {
	s := newTestServer(t, nil)
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, PrivateKey: newKey(t), KeyID: "k1"})
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if s.count("register") != 1 || s.regs[0]["token_endpoint_auth_method"] != "private_key_jwt" || s.regs[0]["application_type"] != "web" {
		t.Errorf("registration = %v", s.regs)
	}
}

// TestDeviceFlowTransientFailures: a token endpoint that is down (503, 429)
// or drops the connection while the user approves does not end the flow:
// the client polls less often, twice the interval each time (RFC 8628
// §3.5), and gets the token; an OAuth error still ends it.
func TestDeviceFlowTransientFailures(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.deviceFail = []string{"503", "drop", "429"} })
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode, DevicePrompter: PrintDevice(&strings.Builder{})})
	c.pollUnit = time.Millisecond
	var waits []int64
	c.onPoll = func(i int64) { waits = append(waits, i) }
	if err := call(testCtx(t), c, s.mcpURL()); err != nil {
		t.Fatalf("call = %v, want the token after the failures", err)
	}
	if diff := cmp.Diff([]int64{1, 2, 4, 8}, waits); diff != "" {
		t.Errorf("poll intervals (-want +got):\n%s", diff)
	}

	s = newTestServer(t, func(s *testServer) { s.deviceFail = []string{"400"} })
	c = mustNew(t, Config{ServerURL: s.mcpURL(), Method: DeviceCode, DevicePrompter: PrintDevice(&strings.Builder{})})
	c.pollUnit = time.Millisecond
	if err := call(testCtx(t), c, s.mcpURL()); !errorsAs[*TokenError](err) {
		t.Errorf("call with the poll answered 400 = %v, want a *TokenError", err)
	}
}

// TestSharedAuthorizationSurvivesFirstCaller: two requests of a service
// get a 401 at once and share one client-credentials flow; the token
// endpoint is slow, and the caller that started the flow gives up (its
// context ends) while the other, whose context is live, waits. The
// second must not fail with the first one's context error: it runs the
// flow again for itself.
func TestSharedAuthorizationSurvivesFirstCaller(t *testing.T) {
	arrived := make(chan struct{}, 4)
	var srv *httptest.Server
	var mu sync.Mutex
	grants := 0 // guarded by mu
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"issuer": srv.URL, "token_endpoint": srv.URL + "/token",
			"authorization_endpoint": srv.URL + "/authorize", "code_challenge_methods_supported": []string{"S256"}})
	})
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm() // read to its end: a closed connection then ends r.Context()
		mu.Lock()
		grants++
		first := grants == 1
		mu.Unlock()
		arrived <- struct{}{}
		if first {
			<-r.Context().Done() // slow: unanswered when its caller leaves
			return
		}
		writeJSON(w, 200, map[string]any{"access_token": "svc-token", "token_type": "Bearer", "expires_in": 3600})
	})
	srv = httptest.NewServer(mux) // no Protected Resource Metadata: the 2025-03-26 fallback
	t.Cleanup(srv.Close)
	c := mustNew(t, Config{ServerURL: srv.URL + "/mcp", Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw"})
	ctx := testCtx(t)
	challenge := &transport.HTTPError{StatusCode: 401, WWWAuthenticate: `Bearer`}
	firstCtx, leave := context.WithCancel(ctx)
	firstDone := make(chan error, 1)
	go func() { firstDone <- c.Authorize(firstCtx, challenge) }()
	select {
	case <-arrived: // the first caller's flow waits on the token endpoint
	case err := <-firstDone:
		t.Fatalf("first caller's Authorize = %v before reaching the token endpoint", err)
	}
	second := make(chan error, 1)
	go func() { second <- c.Authorize(ctx, challenge) }()
	time.Sleep(50 * time.Millisecond) // the second caller joins the flow
	leave()
	if err := <-firstDone; !errors.Is(err, context.Canceled) {
		t.Errorf("first caller's Authorize = %v, want context.Canceled", err)
	}
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("second caller's Authorize = %v, want nil (a flow of its own)", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("second caller's Authorize still waiting 10 s after the first caller left")
	}
	if tok, err := c.Token(ctx); err != nil || tok != "svc-token" {
		t.Errorf("Token = %q, %v; want svc-token", tok, err)
	}
}
