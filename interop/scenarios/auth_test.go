package scenarios

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// authMock plays the auth scenarios' MCP server and authorization server
// (src/scenarios/client/auth/helpers/createServer.ts and
// createAuthServer.ts of the conformance repository) on one origin: the
// protected resource metadata at /.well-known/oauth-protected-resource/mcp
// names the origin as a root issuer.
type authMock struct {
	methods  []string // code_challenge_methods_supported; nil: absent
	issuer   string   // the metadata's issuer; "": the origin
	ttl      time.Duration
	rotate   bool
	srv      *httptest.Server
	mu       sync.Mutex
	tokens   map[string]time.Time // access token → expiry
	refresh  map[string]bool      // live refresh tokens
	n        int
	authReq  bool // the authorization endpoint was requested
	grants   int  // refresh_token grants
	invalid  int  // refresh_token grants with a refresh token no longer valid
	valid    int  // MCP requests with a valid token
	validNew int  // … with a token issued by a refresh grant
	fromRef  map[string]bool
}

func newAuthMock(t *testing.T, am *authMock) *authMock {
	am.tokens, am.refresh, am.fromRef = map[string]time.Time{}, map[string]bool{}, map[string]bool{}
	mux := http.NewServeMux()
	mux.HandleFunc("/mcp", am.mcp)
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]any{"resource": am.srv.URL + "/mcp", "authorization_servers": []string{am.srv.URL}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", am.metadata)
	mux.HandleFunc("/register", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusCreated)
		writeJSON(w, map[string]any{"client_id": "scenario-client", "redirect_uris": []string{"http://localhost:3000/callback"}, "token_endpoint_auth_method": "none"})
	})
	mux.HandleFunc("/authorize", func(w http.ResponseWriter, r *http.Request) {
		am.mu.Lock()
		am.authReq = true
		am.mu.Unlock()
		q := r.URL.Query()
		to, _ := url.Parse(q.Get("redirect_uri"))
		v := url.Values{"code": {"code-1"}, "state": {q.Get("state")}, "iss": {am.issuerOf()}}
		to.RawQuery = v.Encode()
		http.Redirect(w, r, to.String(), http.StatusFound)
	})
	mux.HandleFunc("/token", am.token)
	am.srv = httptest.NewServer(mux)
	t.Cleanup(am.srv.Close)
	return am
}

func (am *authMock) issuerOf() string {
	if am.issuer != "" {
		return am.issuer
	}
	return am.srv.URL
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func (am *authMock) metadata(w http.ResponseWriter, r *http.Request) {
	md := map[string]any{"issuer": am.issuerOf(), "authorization_endpoint": am.srv.URL + "/authorize",
		"token_endpoint": am.srv.URL + "/token", "registration_endpoint": am.srv.URL + "/register",
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		"token_endpoint_auth_methods_supported": []string{"none"}}
	if am.methods != nil {
		md["code_challenge_methods_supported"] = am.methods
	}
	writeJSON(w, md)
}

// token serves the authorization_code and refresh_token grants.
func (am *authMock) token(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	am.mu.Lock()
	defer am.mu.Unlock()
	refreshed := false
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
	case "refresh_token":
		am.grants++
		rt := r.PostForm.Get("refresh_token")
		if !am.refresh[rt] {
			am.invalid++
			w.WriteHeader(http.StatusBadRequest)
			writeJSON(w, map[string]any{"error": "invalid_grant"})
			return
		}
		if am.rotate {
			delete(am.refresh, rt)
		}
		refreshed = true
	default:
		w.WriteHeader(http.StatusBadRequest)
		writeJSON(w, map[string]any{"error": "unsupported_grant_type"})
		return
	}
	am.n++
	access := fmt.Sprintf("access-%d", am.n)
	am.tokens[access] = time.Now().Add(am.ttl)
	am.fromRef[access] = refreshed
	res := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": int(am.ttl / time.Second)}
	if !refreshed || am.rotate {
		rt := fmt.Sprintf("refresh-%d", am.n)
		am.refresh[rt] = true
		res["refresh_token"] = rt
	}
	writeJSON(w, res)
}

// mcp is a legacy (2025-11-25) MCP endpoint behind bearer tokens.
func (am *authMock) mcp(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	am.mu.Lock()
	exp, ok := am.tokens[tok]
	ok = ok && time.Now().Before(exp)
	if ok {
		am.valid++
		if am.fromRef[tok] {
			am.validNew++
		}
	}
	am.mu.Unlock()
	if !ok {
		w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+am.srv.URL+`/.well-known/oauth-protected-resource/mcp"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	var m struct {
		Method string          `json:"method"`
		ID     json.RawMessage `json:"id"`
	}
	json.NewDecoder(r.Body).Decode(&m)
	if m.ID == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	var result any = map[string]any{}
	switch m.Method {
	case "initialize":
		result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]any{"name": "auth-scenario", "version": "1.0.0"}}
	case protocol.MethodToolsList:
		result = map[string]any{"tools": []any{}}
	}
	reply(w, m.ID, result)
}

// followRedirect is the user's browser: it requests the authorization
// URL and hands back where the server redirects.
func followRedirect(ctx context.Context, authURL string) (*url.URL, error) {
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	defer hc.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	resp.Body.Close()
	loc := resp.Header.Get("Location")
	if loc == "" {
		return nil, errors.New("no redirect")
	}
	return resp.Request.URL.Parse(loc)
}

// dialAuth connects Conduit to the mock with the authorization code flow.
func dialAuth(ctx context.Context, am *authMock) (*client.Client, error) {
	a, err := auth.New(auth.Config{ServerURL: am.srv.URL + "/mcp", Method: auth.AuthorizationCode,
		RedirectURL: "http://localhost:3000/callback", ClientName: "conduit-scenarios",
		Interaction: auth.InteractionFunc(followRedirect)})
	if err != nil {
		return nil, err
	}
	return client.Dial(ctx, am.srv.URL+"/mcp", client.WithProtocol(client.Pin(protocol.Version20251125)), client.WithAuth(client.Auth{Tokens: a}))
}

// TestPKCENoS256Support mirrors auth/pkce-no-s256-support
// (src/scenarios/client/auth/pkce-no-support.ts): with
// code_challenge_methods_supported empty the client must not request
// authorization.
func TestPKCENoS256Support(t *testing.T) {
	am := newAuthMock(t, &authMock{methods: []string{}, ttl: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dialAuth(ctx, am)
	if err == nil {
		c.Close()
	}
	am.mu.Lock()
	defer am.mu.Unlock()
	check(t, "pkce-s256-required", !am.authReq && errors.Is(err, auth.ErrPKCEUnsupported), "authorization requested %v; Dial error %v", am.authReq, err)
}

// TestIssuerMismatch mirrors auth/issuer-mismatch
// (src/scenarios/client/auth/issuer-mismatch.ts): metadata whose issuer
// differs from the one the metadata URL was built from is rejected, and
// no authorization is requested.
func TestIssuerMismatch(t *testing.T) {
	am := newAuthMock(t, &authMock{methods: []string{"S256"}, issuer: "https://evil.example.com", ttl: time.Hour})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := dialAuth(ctx, am)
	if err == nil {
		c.Close()
	}
	am.mu.Lock()
	defer am.mu.Unlock()
	t.Logf("Dial: %v", err)
	check(t, "issuer-mismatch-rejected", !am.authReq && err != nil, "authorization requested %v; Dial error %v", am.authReq, err)
}

// TestTokenRefresh mirrors auth/token-refresh-basic and
// auth/token-refresh-rotation (src/scenarios/client/auth/token-refresh.ts):
// access tokens live 2 s; the client must use the refresh_token grant and
// the new access token, and, when the server rotates refresh tokens, the
// newest refresh token.
func TestTokenRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for two token expiries")
	}
	for _, rotate := range []bool{false, true} {
		t.Run(fmt.Sprintf("rotation=%v", rotate), func(t *testing.T) {
			am := newAuthMock(t, &authMock{methods: []string{"S256"}, ttl: 2 * time.Second, rotate: rotate})
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := dialAuth(ctx, am)
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer c.Close()
			for range 3 {
				for _, err := range c.Tools(ctx) {
					if err != nil {
						t.Fatalf("Tools: %v", err)
					}
				}
				time.Sleep(2500 * time.Millisecond) // the access token expires
			}
			am.mu.Lock()
			defer am.mu.Unlock()
			check(t, "refresh-token-grant-used", am.grants >= 1, "no refresh_token grant")
			check(t, "refreshed-token-used-successfully", am.validNew >= 1 && am.valid >= 2, "valid requests %d, with a refreshed token %d", am.valid, am.validNew)
			if rotate {
				check(t, "refresh-rotation-result", am.grants >= 2 && am.invalid == 0, "refresh grants %d, with an old refresh token %d", am.grants, am.invalid)
			}
		})
	}
}
