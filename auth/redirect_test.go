package auth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/transport"
)

// wantRedirectError fails unless err holds a *transport.RedirectError
// from → to.
func wantRedirectError(t *testing.T, what string, err error, from, to string) {
	t.Helper()
	re, ok := errors.AsType[*transport.RedirectError](err)
	if !ok || re.From != from || re.To != to || !errors.Is(err, transport.ErrCrossOriginRedirect) {
		t.Errorf("%s: error = %v; want a RedirectError from %s to %s", what, err, from, to)
	}
}

// TestCredentialRequestsRedirectSameOriginOnly: registration and the
// token endpoint, whose requests carry credentials (a secret in the form,
// the registration), follow a redirect within their origin and refuse one
// to another origin with a RedirectError; the other origin sees nothing.
func TestCredentialRequestsRedirectSameOriginOnly(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		writeJSON(w, 200, map[string]any{"client_id": "stolen", "access_token": "x", "token_type": "Bearer"})
	}))
	defer other.Close()
	home := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/register-away", "/token-away":
			http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
		case "/register-moved", "/token-moved":
			http.Redirect(w, r, strings.TrimSuffix(r.URL.Path, "-moved"), http.StatusTemporaryRedirect)
		case "/register":
			writeJSON(w, 201, map[string]any{"client_id": "c1"})
		case "/token":
			if err := r.ParseForm(); err != nil || r.PostForm.Get("client_secret") != "pw" && !strings.HasPrefix(r.Header.Get("Authorization"), "Basic ") {
				http.Error(w, "no credentials", http.StatusUnauthorized)
				return
			}
			writeJSON(w, 200, map[string]any{"access_token": "t1", "token_type": "Bearer", "expires_in": 3600})
		default:
			http.NotFound(w, r)
		}
	}))
	defer home.Close()
	ctx := testCtx(t)
	c := mustNew(t, Config{ServerURL: home.URL + "/mcp", Method: ClientCredentials, ClientID: "svc", ClientSecret: "pw"})

	_, err := c.register(ctx, &ServerMetadata{Issuer: home.URL, RegistrationEndpoint: home.URL + "/register-away"}, testRedirect)
	wantRedirectError(t, "register", err, home.URL, other.URL)
	reg, err := c.register(ctx, &ServerMetadata{Issuer: home.URL, RegistrationEndpoint: home.URL + "/register-moved"}, testRedirect)
	if err != nil || reg.ClientID != "c1" {
		t.Errorf("register through a same-origin redirect = %+v, %v", reg, err)
	}

	_, err = c.clientCredentials(ctx, &ServerMetadata{Issuer: home.URL, TokenEndpoint: home.URL + "/token-away"}, home.URL+"/mcp", nil)
	wantRedirectError(t, "token", err, home.URL, other.URL)
	tok, err := c.clientCredentials(ctx, &ServerMetadata{Issuer: home.URL, TokenEndpoint: home.URL + "/token-moved"}, home.URL+"/mcp", nil)
	if err != nil || tok.AccessToken != "t1" {
		t.Errorf("token through a same-origin redirect = %+v, %v", tok, err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other origin saw %d requests; want none", n)
	}
}

// TestDiscoveryRedirects: metadata discovery follows a redirect to
// another origin, but never one from https to http.
func TestDiscoveryRedirects(t *testing.T) {
	doc := map[string]any{"resource": "r", "authorization_servers": []string{"https://as.example"}}
	var plainHits atomic.Int32
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plainHits.Add(1)
		writeJSON(w, 200, doc)
	}))
	defer plain.Close()
	hop := httptest.NewServer(http.RedirectHandler(plain.URL+"/prm", http.StatusFound))
	defer hop.Close()
	secure := httptest.NewTLSServer(http.RedirectHandler(plain.URL+"/prm", http.StatusFound))
	defer secure.Close()
	ctx := testCtx(t)

	c := mustNew(t, Config{ServerURL: hop.URL + "/mcp"})
	var m ProtectedResourceMetadata
	if err := getJSON(ctx, c.meta, hop.URL+"/prm", &m); err != nil || m.Resource != "r" {
		t.Errorf("discovery through a redirect to another origin = %+v, %v", m, err)
	}
	hits := plainHits.Load()
	cs := mustNew(t, Config{ServerURL: secure.URL + "/mcp", HTTPClient: secure.Client()})
	err := getJSON(ctx, cs.meta, secure.URL+"/prm", &m)
	wantRedirectError(t, "https to http", err, secure.URL, plain.URL)
	if plainHits.Load() != hits {
		t.Error("discovery followed a redirect from https to http")
	}
}
