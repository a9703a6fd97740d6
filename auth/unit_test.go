package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/transport"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   string
		want []Challenge
	}{
		{`Bearer resource_metadata="https://x/.well-known/oauth-protected-resource"`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"resource_metadata": "https://x/.well-known/oauth-protected-resource"}}}},
		{`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/m", error_description="need \"b\""`,
			[]Challenge{{Scheme: "Bearer", Params: map[string]string{"error": "insufficient_scope", "scope": "a b", "resource_metadata": "https://x/m", "error_description": `need "b"`}}}},
		{`Basic realm="x", Bearer realm="y", scope=tools`,
			[]Challenge{{Scheme: "Basic", Params: map[string]string{"realm": "x"}}, {Scheme: "Bearer", Params: map[string]string{"realm": "y", "scope": "tools"}}}},
		{`Negotiate abc123==, Bearer`,
			[]Challenge{{Scheme: "Negotiate", Token68: "abc123==", Params: map[string]string{}}, {Scheme: "Bearer", Params: map[string]string{}}}},
		{`DPoP algs="ES256 RS256" , error="use_dpop_nonce", Bearer scope="x,y"`,
			[]Challenge{{Scheme: "DPoP", Params: map[string]string{"algs": "ES256 RS256", "error": "use_dpop_nonce"}}, {Scheme: "Bearer", Params: map[string]string{"scope": "x,y"}}}},
		{`Bearer SCOPE = "a", scope="b"`, []Challenge{{Scheme: "Bearer", Params: map[string]string{"scope": "a"}}}},
		{`Bearer realm="unterminated`, []Challenge{{Scheme: "Bearer", Params: map[string]string{"realm": "unterminated"}}}},
		{``, nil},
		{`,,, ,`, nil},
		{`"garbage" Bearer x=1`, []Challenge{{Scheme: "garbage", Params: map[string]string{}}, {Scheme: "Bearer", Params: map[string]string{"x": "1"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, ParseChallenges(tt.in)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	f.Add(`Bearer error="x", scope="a b"`)
	f.Add(`Basic abc==, Bearer realm="\"q\""`)
	f.Fuzz(func(t *testing.T, s string) { ParseChallenges(s) })
}

func TestCanonicalResource(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://MCP.Example.com/mcp/", "https://mcp.example.com/mcp"},
		{"HTTPS://mcp.example.com:443/mcp#frag", "https://mcp.example.com/mcp"},
		{"https://mcp.example.com/", "https://mcp.example.com"},
		{"http://127.0.0.1:8080/a/b", "http://127.0.0.1:8080/a/b"},
		{"https://user:pw@mcp.example.com/x", "https://mcp.example.com/x"},
		{"https://mcp.example.com/x?tenant=1", "https://mcp.example.com/x?tenant=1"},
	}
	for _, tt := range tests {
		got, err := CanonicalResource(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CanonicalResource(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"mcp.example.com", "ftp://x/y", "/relative", "::"} {
		if _, err := CanonicalResource(bad); err == nil {
			t.Errorf("CanonicalResource(%q) succeeded", bad)
		}
	}
}

func TestMetadataURLOrder(t *testing.T) {
	got, _ := asMetadataURLs("https://auth.example.com/tenant1")
	want := []string{
		"https://auth.example.com/.well-known/oauth-authorization-server/tenant1",
		"https://auth.example.com/.well-known/openid-configuration/tenant1",
		"https://auth.example.com/tenant1/.well-known/openid-configuration",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("path issuer (-want +got):\n%s", diff)
	}
	got, _ = asMetadataURLs("https://auth.example.com")
	want = []string{"https://auth.example.com/.well-known/oauth-authorization-server", "https://auth.example.com/.well-known/openid-configuration"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("root issuer (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"https://h/.well-known/oauth-protected-resource/a/mcp", "https://h/.well-known/oauth-protected-resource"}, prmURLs("https://h/a/mcp")); diff != "" {
		t.Errorf("PRM URLs (-want +got):\n%s", diff)
	}
}

// TestTokenNeverReachesAnotherOrigin: Header, TokenFor and RoundTripper
// give nothing to requests on another origin, and a resource whose
// metadata claims another origin is refused.
func TestTokenNeverReachesAnotherOrigin(t *testing.T) {
	s := newTestServer(t, nil)
	c := authorized(t, s, nil)
	ctx := testCtx(t)
	var mu sync.Mutex
	var seen []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("Authorization")+r.Header.Get("DPoP"))
		mu.Unlock()
	}))
	defer other.Close()

	req, _ := http.NewRequestWithContext(ctx, "POST", other.URL+"/mcp", nil)
	if err := c.Header(ctx, req); err != nil || req.Header.Get("Authorization") != "" {
		t.Errorf("Header on another origin: %q, %v", req.Header.Get("Authorization"), err)
	}
	if _, err := c.TokenFor(ctx, other.URL+"/mcp"); !errors.Is(err, ErrWrongOrigin) {
		t.Errorf("TokenFor another origin: %v", err)
	}
	if tok, err := c.TokenFor(ctx, s.URL+"/mcp/sub"); err != nil || tok == "" {
		t.Errorf("TokenFor own origin: %q, %v", tok, err)
	}
	hc := &httpClient{rt: c.RoundTripper(nil)}
	if _, err := hc.post(ctx, other.URL+"/x"); err != nil {
		t.Fatal(err)
	}
	// A redirect from the MCP server to another origin: the redirected
	// request carries nothing either.
	redir := httptest.NewServer(http.RedirectHandler(other.URL+"/landing", http.StatusTemporaryRedirect))
	defer redir.Close()
	c2 := mustNew(t, Config{ServerURL: redir.URL + "/mcp"})
	c2.adopt(&Token{AccessToken: "secret-token", Issuer: "x", Resource: redir.URL + "/mcp"})
	hc2 := &httpClient{rt: c2.RoundTripper(nil)}
	if _, err := hc2.post(ctx, redir.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, h := range seen {
		if h != "" {
			t.Errorf("another origin received credentials %q", h)
		}
	}
	if len(seen) != 2 {
		t.Errorf("other origin saw %d requests, want 2", len(seen))
	}

	// Protected Resource Metadata naming another origin's resource.
	s2 := newTestServer(t, func(s *testServer) { s.prmResource = other.URL + "/mcp" })
	c3 := mustNew(t, Config{ServerURL: s2.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
	if _, ok := errors.AsType[*MetadataError](call(ctx, c3, s2.mcpURL())); !ok {
		t.Error("metadata for another origin's resource accepted")
	}
}

func TestInsecureEndpointsRefused(t *testing.T) {
	for _, u := range []string{"http://auth.example.com/", "ftp://x"} {
		if err := checkSecure(u); err == nil {
			t.Errorf("checkSecure(%q) = nil", u)
		}
	}
	for _, u := range []string{"https://auth.example.com", "http://127.0.0.1:9/x", "http://localhost/x", "http://[::1]:8/"} {
		if err := checkSecure(u); err != nil {
			t.Errorf("checkSecure(%q) = %v", u, err)
		}
	}
	_, err := fetchServerMetadata(testCtx(t), http.DefaultClient, "http://auth.example.com", false)
	if !errors.Is(err, ErrInsecureEndpoint) {
		t.Errorf("fetchServerMetadata over http: %v", err)
	}
}

func TestFileStore(t *testing.T) {
	ctx := testCtx(t)
	dir := tempDir(t)
	s := &FileStore{Path: filepath.Join(dir, "tokens.json")}
	if tok, err := s.LoadToken(ctx, "k"); tok != nil || err != nil {
		t.Fatalf("empty store: %v %v", tok, err)
	}
	want := &Token{AccessToken: "a", RefreshToken: "r", TokenType: "Bearer", Expiry: time.Unix(1e9, 0).UTC(), Scopes: []string{"x"}, Issuer: "i", Resource: "https://r"}
	if err := s.SaveToken(ctx, "k", want); err != nil {
		t.Fatal(err)
	}
	reg := &ClientRegistration{Issuer: "i", ClientID: "c", ClientSecret: "s", AuthMethod: ClientSecretBasic}
	if err := s.SaveClient(ctx, "i", reg); err != nil {
		t.Fatal(err)
	}
	// A second FileStore value (another process) sees both.
	s2 := &FileStore{Path: s.Path}
	got, err := s2.LoadToken(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("token (-want +got):\n%s", diff)
	}
	if r, _ := s2.LoadClient(ctx, "i"); r == nil || r.ClientSecret != "s" {
		t.Errorf("client = %v", r)
	}
	fi, err := os.Stat(s.Path)
	if err != nil {
		t.Fatal(err)
	}
	// Windows has no mode bits: the owner-only ACL is internal/atomicfile's
	// test.
	if runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", fi.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
	if err := s.SaveToken(ctx, "k", nil); err != nil {
		t.Fatal(err)
	}
	if tok, _ := s2.LoadToken(ctx, "k"); tok != nil {
		t.Error("deleted token still loads")
	}
	os.WriteFile(s.Path, []byte("{not json"), 0o600)
	if _, err := s.LoadToken(ctx, "k"); err == nil {
		t.Error("corrupt store loaded without error")
	}
}

// TestStoreLeases checks the refresh leases of the in-process stores: one
// holder per key (a waiter gives up when its context ends), keys
// independent, renew and release only by the owner.
func TestStoreLeases(t *testing.T) {
	for name, l := range map[string]RefreshLeaser{
		"file":   &FileStore{Path: filepath.Join(tempDir(t), "t.json")},
		"memory": &MemoryStore{},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := testCtx(t)
			if ttl, err := l.AcquireLease(ctx, "k", "a"); err != nil || ttl != 0 {
				t.Fatalf("AcquireLease(k, a) = %v, %v; want 0, nil", ttl, err)
			}
			cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel()
			if _, err := l.AcquireLease(cctx, "k", "b"); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("AcquireLease(k, b) while held = %v, want context.DeadlineExceeded", err)
			}
			if _, err := l.AcquireLease(ctx, "other", "b"); err != nil {
				t.Errorf("AcquireLease(other, b) = %v; another key must not wait", err)
			}
			if err := l.RenewLease(ctx, "k", "b"); !errors.Is(err, ErrLeaseLost) {
				t.Errorf("RenewLease(k, b) by a non-owner = %v, want ErrLeaseLost", err)
			}
			if err := l.RenewLease(ctx, "k", "a"); err != nil {
				t.Errorf("RenewLease(k, a) = %v", err)
			}
			// A non-owner's release does nothing: the lease stays held.
			l.ReleaseLease(ctx, "k", "b")
			cctx2, cancel2 := context.WithTimeout(ctx, 50*time.Millisecond)
			defer cancel2()
			if _, err := l.AcquireLease(cctx2, "k", "c"); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("AcquireLease after a non-owner's release = %v, want context.DeadlineExceeded", err)
			}
			l.ReleaseLease(ctx, "k", "a")
			l.ReleaseLease(ctx, "k", "a") // idempotent
			if _, err := l.AcquireLease(ctx, "k", "c"); err != nil {
				t.Fatalf("AcquireLease after release = %v", err)
			}
			if err := l.RenewLease(ctx, "k", "a"); !errors.Is(err, ErrLeaseLost) {
				t.Errorf("RenewLease by the former owner = %v, want ErrLeaseLost", err)
			}
			l.ReleaseLease(ctx, "k", "c")
			l.ReleaseLease(ctx, "other", "b")
		})
	}
}

func TestSecretsRedacted(t *testing.T) {
	tok := Token{AccessToken: "AT-SECRET", RefreshToken: "RT-SECRET", Issuer: "i"}
	reg := ClientRegistration{ClientID: "id", ClientSecret: "CS-SECRET"}
	for _, s := range []string{
		fmt.Sprint(tok), fmt.Sprintf("%v %+v %#v %s", tok, tok, tok, tok),
		fmt.Sprintf("%v %+v %#v", &tok, &tok, &tok),
		fmt.Sprint(reg), fmt.Sprintf("%#v %+v", reg, &reg),
	} {
		if strings.Contains(s, "SECRET") {
			t.Errorf("secret printed: %s", s)
		}
	}
	// Token endpoint errors carry no secrets from the request.
	s := newTestServer(t, nil)
	s.addClient(&tClient{id: "svc", secret: "right", method: "client_secret_basic"})
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, ClientID: "svc", ClientSecret: "WRONG-SECRET"})
	err := call(testCtx(t), c, s.mcpURL())
	if err == nil || strings.Contains(err.Error(), "WRONG-SECRET") {
		t.Errorf("err = %v", err)
	}
}

// TestLoopback drives the real loopback Interaction: the "browser" follows
// the authorization server's redirect to the listener on 127.0.0.1.
func TestLoopback(t *testing.T) {
	s := newTestServer(t, nil)
	var out strings.Builder
	lb := &Loopback{Out: &out, Browser: func(ctx context.Context, u string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || !strings.Contains(string(b), "Authorization received") {
			return fmt.Errorf("callback page: %d %s", resp.StatusCode, b)
		}
		return nil
	}}
	defer lb.Close()
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: lb})
	ctx := testCtx(t)
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), s.URL+"/authorize?") || strings.Contains(out.String(), "could not open") {
		t.Errorf("output = %q", out.String())
	}
	redirect, _ := lb.RedirectURL(ctx)
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") || s.regs[0]["application_type"] != "native" {
		t.Errorf("redirect %q, registration %v", redirect, s.regs[0])
	}
	// A second authorization reuses the same port (the registered URI).
	s.expireAccess()
	s.mu.Lock()
	for _, rt := range s.refresh {
		rt.used = true
	}
	s.mu.Unlock()
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.count("register"); got != 1 {
		t.Errorf("registrations = %d, want 1", got)
	}

	// Canceled while waiting for the user.
	lb2 := &Loopback{Out: io.Discard, NoBrowser: true}
	defer lb2.Close()
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := lb2.Authorize(cctx, "https://as.example/authorize"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled Authorize: %v", err)
	}
}

// The Client plugs into the transport (TokenSource, HeaderFunc, HTTP
// client Transport) and into the connection engine's Authorize hook.
var (
	_                                                   = transport.StreamableHTTP{TokenSource: (*Client)(nil), HeaderFunc: (*Client)(nil).Header}
	_ func(context.Context, *transport.HTTPError) error = (*Client)(nil).Authorize
	_ http.RoundTripper                                 = (*Client)(nil).RoundTripper(nil)
)
