package auth

import (
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestAuthorizationCodeDiscoveryVariants runs the whole interactive flow
// (401 → PRM → AS metadata → DCR → authorize with PKCE → token → retry)
// against each metadata layout the spec requires clients to handle.
func TestAuthorizationCodeDiscoveryVariants(t *testing.T) {
	tests := []struct {
		name      string
		configure func(s *testServer)
	}{
		{"rfc8414 root issuer", nil},
		{"rfc8414 issuer with path", func(s *testServer) { s.issuerPath = "/tenant1" }},
		{"oidc root issuer", func(s *testServer) { s.oidcOnly = true }},
		{"oidc issuer with path (appended)", func(s *testServer) { s.oidcOnly = true; s.issuerPath = "/tenant1" }},
		{"2025-03-26: no PRM, metadata at root", func(s *testServer) { s.noPRM = true }},
		{"2025-03-26: no PRM, no metadata, default endpoints", func(s *testServer) { s.noPRM = true; s.noASMetadata = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, tt.configure)
			ctx := testCtx(t)
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
			if err := call(ctx, c, s.mcpURL()); err != nil {
				t.Fatalf("call: %v", err)
			}
			if got := s.count("authorization_code"); got != 1 {
				t.Errorf("code exchanges = %d, want 1", got)
			}
			if got := s.count("register"); got != 1 {
				t.Errorf("registrations = %d, want 1", got)
			}
			q := s.authQuery
			if q.Get("code_challenge_method") != "S256" || q.Get("resource") != s.mcpURL() || q.Get("state") == "" {
				t.Errorf("authorization request %v lacks PKCE S256, resource or state", q)
			}
			// A second call uses the stored token: no new flow.
			if err := call(ctx, c, s.mcpURL()); err != nil {
				t.Fatalf("second call: %v", err)
			}
			if got := s.count("authorize"); got != 1 {
				t.Errorf("authorizations = %d, want 1", got)
			}
		})
	}
}

func TestIssuerMismatchRejected(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.badIssuer = true })
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
	err := call(testCtx(t), c, s.mcpURL())
	if !errors.Is(err, ErrIssuerMismatch) {
		t.Fatalf("err = %v, want ErrIssuerMismatch", err)
	}
	if _, ok := errors.AsType[*MetadataError](err); !ok {
		t.Errorf("err %T is not a *MetadataError", err)
	}
	if s.count("authorize")+s.count("register") != 0 {
		t.Error("flow went on after an issuer mismatch")
	}
}

func TestMissingS256Refused(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.noS256 = true })
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
	err := call(testCtx(t), c, s.mcpURL())
	if !errors.Is(err, ErrPKCEUnsupported) {
		t.Fatalf("err = %v, want ErrPKCEUnsupported", err)
	}
	if s.count("authorize") != 0 {
		t.Error("authorization request sent without S256 support")
	}
}

// TestMixUpDefense checks the RFC 9207 table of MCP 2026-07-28 on the
// authorization response, including error responses.
func TestMixUpDefense(t *testing.T) {
	tests := []struct {
		name      string
		configure func(s *testServer)
		wantErr   error // nil = success
		wantDeny  bool  // *AuthorizationResponseError
	}{
		{"iss supported and sent", func(s *testServer) { s.issSupported = true; s.sendIss = true }, nil, false},
		{"iss supported but absent", func(s *testServer) { s.issSupported = true }, ErrIssuerMismatch, false},
		{"iss sent without metadata flag", func(s *testServer) { s.sendIss = true }, nil, false},
		{"neither", nil, nil, false},
		{"attacker iss", func(s *testServer) { s.wrongIss = "https://attacker.example" }, ErrIssuerMismatch, false},
		{"iss differs only by trailing slash", func(s *testServer) { s.wrongIss = "SELF/" }, ErrIssuerMismatch, false},
		{"error response with attacker iss", func(s *testServer) { s.wrongIss = "https://attacker.example"; s.denyAuthorize = true }, ErrIssuerMismatch, false},
		{"error response, iss required and absent", func(s *testServer) { s.issSupported = true; s.denyAuthorize = true }, ErrIssuerMismatch, false},
		{"error response with right iss", func(s *testServer) { s.sendIss = true; s.denyAuthorize = true }, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, tt.configure)
			if s.wrongIss == "SELF/" {
				s.wrongIss = s.issuer() + "/"
			}
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
			err := call(testCtx(t), c, s.mcpURL())
			switch {
			case tt.wantDeny:
				ae, ok := errors.AsType[*AuthorizationResponseError](err)
				if !ok || ae.Code != "access_denied" {
					t.Fatalf("err = %v, want access_denied", err)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if _, ok := errors.AsType[*AuthorizationResponseError](err); ok {
					t.Error("error fields of an unverified response were surfaced")
				}
				if s.count("authorization_code") != 0 {
					t.Error("code redeemed despite the failed check")
				}
			default:
				if err != nil {
					t.Fatalf("err = %v", err)
				}
			}
		})
	}
}

func TestStateMismatch(t *testing.T) {
	s := newTestServer(t, nil)
	in := tamper(autoApprove(t), func(q url.Values) { q.Set("state", "forged") })
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: in, RedirectURL: testRedirect})
	if err := call(testCtx(t), c, s.mcpURL()); !errors.Is(err, ErrStateMismatch) {
		t.Fatalf("err = %v, want ErrStateMismatch", err)
	}
	if s.count("authorization_code") != 0 {
		t.Error("code redeemed despite state mismatch")
	}
}

func TestRegistrationPriority(t *testing.T) {
	t.Run("pre-registered", func(t *testing.T) {
		s := newTestServer(t, nil)
		s.addClient(&tClient{id: "pre", secret: "s3cret", method: "client_secret_basic", redirects: []string{testRedirect}})
		c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientID: "pre", ClientSecret: "s3cret", Interaction: autoApprove(t), RedirectURL: testRedirect})
		if err := call(testCtx(t), c, s.mcpURL()); err != nil {
			t.Fatal(err)
		}
		if s.count("register") != 0 {
			t.Error("registered although credentials were configured")
		}
		if got := s.authQuery.Get("client_id"); got != "pre" {
			t.Errorf("client_id = %q", got)
		}
	})
	t.Run("pre-registered for another issuer", func(t *testing.T) {
		s := newTestServer(t, nil)
		c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientID: "pre", ClientIssuer: "https://other.example", Interaction: autoApprove(t), RedirectURL: testRedirect})
		if err := call(testCtx(t), c, s.mcpURL()); err != nil {
			t.Fatal(err)
		}
		if s.count("register") != 1 {
			t.Error("credentials of another issuer were used instead of registering")
		}
	})
	t.Run("client id metadata document", func(t *testing.T) {
		s := newTestServer(t, func(s *testServer) { s.cimd = true })
		c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientMetadataURL: s.URL + "/client-metadata.json", Interaction: autoApprove(t), RedirectURL: testRedirect})
		if err := call(testCtx(t), c, s.mcpURL()); err != nil {
			t.Fatal(err)
		}
		if s.count("register") != 0 {
			t.Error("registered although CIMD is supported")
		}
		if got := s.authQuery.Get("client_id"); got != s.URL+"/client-metadata.json" {
			t.Errorf("client_id = %q", got)
		}
	})
	t.Run("CIMD unsupported falls back to DCR", func(t *testing.T) {
		s := newTestServer(t, nil)
		c := mustNew(t, Config{ServerURL: s.mcpURL(), ClientMetadataURL: s.URL + "/client-metadata.json", Interaction: autoApprove(t), RedirectURL: testRedirect})
		if err := call(testCtx(t), c, s.mcpURL()); err != nil {
			t.Fatal(err)
		}
		if s.count("register") != 1 {
			t.Error("no DCR")
		}
	})
	t.Run("nothing possible", func(t *testing.T) {
		s := newTestServer(t, func(s *testServer) { s.noRegister = true })
		c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
		err := call(testCtx(t), c, s.mcpURL())
		cre, ok := errors.AsType[*CredentialsRequiredError](err)
		if !ok || cre.Issuer != s.issuer() {
			t.Fatalf("err = %v, want *CredentialsRequiredError for %s", err, s.issuer())
		}
	})
	t.Run("redirect URI rejected", func(t *testing.T) {
		s := newTestServer(t, func(s *testServer) { s.rejectRedir = true })
		c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
		err := call(testCtx(t), c, s.mcpURL())
		if !errors.Is(err, ErrRedirectURIRejected) {
			t.Fatalf("err = %v, want ErrRedirectURIRejected", err)
		}
	})
}

func TestDCRApplicationType(t *testing.T) {
	tests := []struct{ redirect, want string }{
		{testRedirect, "native"},
		{"http://localhost:8080/cb", "native"},
		{"https://app.example/cb", "web"},
	}
	for _, tt := range tests {
		t.Run(tt.redirect, func(t *testing.T) {
			s := newTestServer(t, nil)
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: tt.redirect})
			if err := call(testCtx(t), c, s.mcpURL()); err != nil {
				t.Fatal(err)
			}
			if got := s.regs[0]["application_type"]; got != tt.want {
				t.Errorf("application_type = %v, want %s", got, tt.want)
			}
			if got := s.regs[0]["redirect_uris"]; !cmp.Equal(got, []any{tt.redirect}) {
				t.Errorf("redirect_uris = %v", got)
			}
		})
	}
}

// TestRegistrationPerIssuer: a stored registration is reused with its
// issuer and never with another authorization server.
func TestRegistrationPerIssuer(t *testing.T) {
	store := &MemoryStore{}
	s1 := newTestServer(t, nil)
	s2 := newTestServer(t, nil)
	ctx := testCtx(t)
	for i, s := range []*testServer{s1, s1, s2} {
		c := mustNew(t, Config{ServerURL: s.mcpURL(), Store: store, Interaction: autoApprove(t), RedirectURL: testRedirect})
		if err := call(ctx, c, s.mcpURL()); err != nil {
			t.Fatalf("client %d: %v", i, err)
		}
	}
	if got := s1.count("register"); got != 1 {
		t.Errorf("registrations at AS 1 = %d, want 1 (reused)", got)
	}
	if got := s2.count("register"); got != 1 {
		t.Errorf("registrations at AS 2 = %d, want 1 (not reusing AS 1's)", got)
	}
	r1, _ := store.LoadClient(ctx, s1.issuer())
	r2, _ := store.LoadClient(ctx, s2.issuer())
	if r1 == nil || r2 == nil || r1.Issuer != s1.issuer() || r2.Issuer != s2.issuer() {
		t.Fatalf("stored registrations %v / %v", r1, r2)
	}
}

// TestRegistrationSecretExpiry: a registration's client secret expiry
// (client_secret_expires_at) is read in the forms servers send it (an
// integer, a number with a fraction, a numeric string); one past what a
// stored date holds (year 9999) means a secret that never expires. The
// registration is stored and reused: neither may make the registration,
// or every save of it, fail.
func TestRegistrationSecretExpiry(t *testing.T) {
	in2100 := time.Unix(4102444800, 0)
	tests := []struct {
		at   any
		want time.Time
	}{
		{int64(4102444800), in2100},
		{4102444800.5, in2100},
		{"4102444800", in2100},
		{"0", time.Time{}},
		{int64(253402300800), time.Time{}},
		{int64(1) << 62, time.Time{}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T(%v)", tt.at, tt.at), func(t *testing.T) {
			s := newTestServer(t, func(s *testServer) { s.secretExpires = tt.at })
			store := &FileStore{Path: filepath.Join(tempDir(t), "tokens.json")}
			ctx := testCtx(t)
			for i := range 2 {
				c := mustNew(t, Config{ServerURL: s.mcpURL(), Method: ClientCredentials, Store: store})
				if err := call(ctx, c, s.mcpURL()); err != nil {
					t.Fatalf("client %d: %v", i, err)
				}
				// The next client authorizes anew, with the stored registration.
				if err := store.SaveToken(ctx, s.mcpURL(), nil); err != nil {
					t.Fatal(err)
				}
			}
			if got, grants := s.count("register"), s.count("client_credentials"); got != 1 || grants != 2 {
				t.Errorf("registrations = %d, grants = %d; want 1 (reused) and 2", got, grants)
			}
			r, err := store.LoadClient(ctx, s.issuer())
			if err != nil || r == nil || r.ClientSecret == "" {
				t.Fatalf("stored registration %v, %v; want one with a secret", r, err)
			}
			if !r.SecretExpiresAt.Equal(tt.want) {
				t.Errorf("secret expires %v, want %v", r.SecretExpiresAt, tt.want)
			}
		})
	}
}

func TestScopeSelection(t *testing.T) {
	tests := []struct {
		name      string
		configure func(s *testServer)
		cfgScopes []string
		want      string
	}{
		{"challenge scope", func(s *testServer) { s.needScope = "mcp:tools"; s.prmScopes = []string{"a", "b"} }, nil, "mcp:tools"},
		{"PRM scopes_supported", func(s *testServer) { s.prmScopes = []string{"a", "b"} }, nil, "a b"},
		{"none", nil, nil, ""},
		{"offline_access added", func(s *testServer) { s.offline = true; s.prmScopes = []string{"read"} }, nil, "read offline_access"},
		{"configured", func(s *testServer) { s.prmScopes = []string{"a"} }, []string{"x", "y"}, "x y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer(t, tt.configure)
			c := mustNew(t, Config{ServerURL: s.mcpURL(), Scopes: tt.cfgScopes, Interaction: autoApprove(t), RedirectURL: testRedirect})
			call(testCtx(t), c, s.mcpURL())
			if s.authQuery == nil {
				t.Fatal("no authorization request")
			}
			if got := s.authQuery.Get("scope"); got != tt.want {
				t.Errorf("scope = %q, want %q", got, tt.want)
			}
			if _, has := s.authQuery["scope"]; tt.want == "" && has {
				t.Error("empty scope parameter sent")
			}
		})
	}
}

// TestStepUp: a 403 insufficient_scope leads to a new authorization for
// the union of previously requested and challenged scopes, limited per
// resource and scope set.
func TestStepUp(t *testing.T) {
	s := newTestServer(t, func(s *testServer) { s.prmScopes = []string{"read"}; s.writeScope = "write" })
	ctx := testCtx(t)
	c := mustNew(t, Config{ServerURL: s.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect})
	if err := call(ctx, c, s.mcpURL()); err != nil {
		t.Fatal(err)
	}
	if got := s.authQuery.Get("scope"); got != "read" {
		t.Fatalf("first scope = %q", got)
	}
	if err := call(ctx, c, s.mcpURL()+"?op=write"); err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(s.authQuery.Get("scope")); !slices.Equal(got, []string{"read", "write"}) {
		t.Errorf("step-up scope = %q, want union [read write]", got)
	}
	if got := s.count("authorize"); got != 2 {
		t.Errorf("authorizations = %d, want 2", got)
	}

	// A server that keeps challenging for the same scope (as if it never
	// took effect): the client stops after MaxStepUps attempts.
	s2 := newTestServer(t, nil)
	c2 := mustNew(t, Config{ServerURL: s2.mcpURL(), Interaction: autoApprove(t), RedirectURL: testRedirect, MaxStepUps: 2})
	challenge := (&transportHTTPError403{scope: "admin"}).err(s2)
	for i := range 2 {
		if err := c2.Authorize(ctx, challenge); err != nil {
			t.Fatalf("step-up %d: %v", i, err)
		}
	}
	if err := c2.Authorize(ctx, challenge); !errors.Is(err, ErrStepUpLimit) {
		t.Fatalf("third step-up for the same scopes: err = %v, want ErrStepUpLimit", err)
	}
	if got := s2.count("authorize"); got != 2 {
		t.Errorf("authorizations = %d, want 2", got)
	}
}

func TestForbiddenWithoutScopeChallenge(t *testing.T) {
	c := mustNew(t, Config{ServerURL: "https://mcp.example/mcp"})
	err := c.Authorize(testCtx(t), (&transportHTTPError403{}).errNoChallenge())
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}
	if err := c.Authorize(testCtx(t), nil); !errors.Is(err, ErrNotAuthChallenge) {
		t.Fatalf("nil: err = %v", err)
	}
}
