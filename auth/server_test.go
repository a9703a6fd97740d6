package auth

import (
	"cmp"
	"crypto"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// testServer is a real authorization server plus a protected "MCP"
// endpoint at /mcp, on one httptest server. Knobs are set before use.
type testServer struct {
	srv *httptest.Server
	URL string // origin

	// Knobs (set before the first request).
	issuerPath    string         // issuer path, e.g. "/tenant1"
	oidcOnly      bool           // metadata only via OpenID discovery
	noS256        bool           // omit code_challenge_methods_supported
	badIssuer     bool           // metadata names another issuer
	issSupported  bool           // authorization_response_iss_parameter_supported
	sendIss       bool           // put iss in redirects
	wrongIss      string         // put this iss in redirects instead
	noPRM         bool           // no Protected Resource Metadata (2025-03-26)
	noASMetadata  bool           // no AS metadata either (default endpoints)
	metaIssuer    string         // path of the issuer the metadata (and iss) names instead, e.g. "/oauth"
	noRegister    bool           // no registration endpoint
	cimd          bool           // client_id_metadata_document_supported
	offline       bool           // scopes_supported has offline_access
	noRefresh     bool           // never issue refresh tokens
	tokenDown     bool           // the token endpoint answers 503
	accessTTL     int            // expires_in seconds; 0 = 3600
	expiresIn     any            // expires_in sent as is instead of accessTTL, when set
	formTokens    bool           // token responses form-encoded instead of JSON
	prmScopes     []string       // PRM scopes_supported
	needScope     string         // scope /mcp requires; challenged in 401
	writeScope    string         // scope /mcp?op=write requires (403 step-up)
	rejectRedir   bool           // DCR rejects redirect URIs
	secretExpires any            // DCR answers this client_secret_expires_at, when set
	dpop          bool           // require DPoP-bound tokens
	dpopNonce     bool           // require a DPoP nonce at token endpoint and /mcp
	rotateNonce   bool           // every /mcp answer carries a new DPoP-Nonce, the only one accepted next
	deviceSlow    int            // answer slow_down this many times first
	devicePending int            // then authorization_pending this many times
	deviceAuth    map[string]any // device authorization response fields sent instead (expires_in, interval)
	deviceFail    []string       // fail the first polls, in turn: an HTTP status without an OAuth error ("503"), or "drop" (the connection)
	denyAuthorize bool           // authorize redirects with error=access_denied
	prmResource   string         // override PRM resource
	altIssuer     string         // PRM names this authorization server instead
	trusted       *testServer    // /mcp also accepts this server's tokens

	idpKey      crypto.Signer // signs ID-JAGs (token exchange)
	workloadKey crypto.PublicKey

	mu        sync.Mutex
	clients   map[string]*tClient
	codes     map[string]*tCode
	access    map[string]*tAccess
	refresh   map[string]*tRefresh
	devices   map[string]*tDevice
	jtis      map[string]bool
	nonce     string
	counts    map[string]int // by grant type, plus "register", "authorize", "mcp401", "mcp403"
	authQuery url.Values     // last authorize query
	forms     []url.Values   // token request forms
	regs      []map[string]any
	seq       int
	mcpAuth   []string // Authorization headers seen at /mcp

}

type tClient struct {
	id, secret string
	method     string
	redirects  []string
	pub        crypto.PublicKey
}

type tCode struct {
	client, challenge, redirect, resource, scope string
}

type tAccess struct {
	scope, resource string
	expired         bool
	jkt             string
}

type tRefresh struct {
	client, scope, resource string
	used                    bool
	jkt                     string
}

type tDevice struct {
	client, scope, resource string
	polls                   int
	failed                  int // polls failed per deviceFail
}

func newTestServer(t *testing.T, configure func(s *testServer)) *testServer {
	t.Helper()
	s := &testServer{
		clients: map[string]*tClient{},
		codes:   map[string]*tCode{},
		access:  map[string]*tAccess{},
		refresh: map[string]*tRefresh{},
		devices: map[string]*tDevice{},
		jtis:    map[string]bool{},
		counts:  map[string]int{},
		nonce:   "nonce-1",
	}
	if configure != nil {
		configure(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.srv.Close)
	return s
}

func (s *testServer) issuer() string { return s.URL + s.issuerPath }

// docIssuer is the issuer the metadata document names (and redirects
// carry as iss): the issuer, or URL+metaIssuer when that knob is set.
func (s *testServer) docIssuer() string { return s.URL + cmp.Or(s.metaIssuer, s.issuerPath) }

func (s *testServer) mcpURL() string { return s.URL + "/mcp" }
func (s *testServer) count(k string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[k]
}

// addClient pre-registers a client.
func (s *testServer) addClient(c *tClient) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.id] = c
}

// expireAccess makes every access token invalid at the resource.
func (s *testServer) expireAccess() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.access {
		a.expired = true
	}
}

func (s *testServer) nextID(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s-%d", prefix, s.seq)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": "test server: " + code})
}

func (s *testServer) metadata() map[string]any {
	iss := s.docIssuer()
	if s.badIssuer {
		iss = s.URL + "/evil"
	}
	m := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         s.URL + "/authorize",
		"token_endpoint":                                 s.URL + "/token",
		"device_authorization_endpoint":                  s.URL + "/device",
		"response_types_supported":                       []string{"code"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post", "none", "private_key_jwt"},
		"authorization_response_iss_parameter_supported": s.issSupported,
		"client_id_metadata_document_supported":          s.cimd,
	}
	if !s.noS256 {
		m["code_challenge_methods_supported"] = []string{"S256"}
	}
	if !s.noRegister {
		m["registration_endpoint"] = s.URL + "/register"
	}
	if s.offline {
		m["scopes_supported"] = []string{"read", "write", "offline_access"}
	}
	return m
}

func (s *testServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := r.URL.Path
	switch {
	case p == "/.well-known/oauth-protected-resource/mcp" && !s.noPRM:
		res := s.mcpURL()
		if s.prmResource != "" {
			res = s.prmResource
		}
		writeJSON(w, 200, map[string]any{
			"resource":              res,
			"authorization_servers": []string{cmp.Or(s.altIssuer, s.issuer())},
			"scopes_supported":      s.prmScopes,
		})
	case !s.noASMetadata && !s.oidcOnly && p == "/.well-known/oauth-authorization-server"+s.issuerPath,
		!s.noASMetadata && s.oidcOnly && (p == "/.well-known/openid-configuration"+s.issuerPath || (s.issuerPath != "" && p == s.issuerPath+"/.well-known/openid-configuration")):
		if s.oidcOnly && s.issuerPath != "" && p == "/.well-known/openid-configuration"+s.issuerPath {
			// Only the path-appended OIDC form exists for this variant.
			http.NotFound(w, r)
			return
		}
		writeJSON(w, 200, s.metadata())
	case p == "/client-metadata.json":
		writeJSON(w, 200, map[string]any{
			"client_id":     s.URL + "/client-metadata.json",
			"client_name":   "test CIMD client",
			"redirect_uris": []string{"http://127.0.0.1:1/callback"},
		})
	case p == "/register":
		s.register(w, r)
	case p == "/authorize":
		s.authorize(w, r)
	case p == "/token":
		s.token(w, r)
	case p == "/device":
		s.device(w, r)
	case p == "/idp/token":
		s.idpToken(w, r)
	case p == "/mcp" && s.rotateNonce:
		next := s.nextID("nonce")
		w.Header().Set("DPoP-Nonce", next)
		s.mcp(w, r)
		s.nonce = next
	case p == "/mcp":
		s.mcp(w, r)
	default:
		http.NotFound(w, r)
	}
}

func (s *testServer) register(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		oauthErr(w, 400, "invalid_client_metadata")
		return
	}
	s.counts["register"]++
	s.regs = append(s.regs, req)
	if s.rejectRedir {
		oauthErr(w, 400, "invalid_redirect_uri")
		return
	}
	method, _ := req["token_endpoint_auth_method"].(string)
	c := &tClient{id: s.nextID("dcr"), method: method}
	if uris, ok := req["redirect_uris"].([]any); ok {
		for _, u := range uris {
			str, _ := u.(string)
			c.redirects = append(c.redirects, str)
		}
	}
	if method == "client_secret_basic" || method == "client_secret_post" {
		c.secret = "secret-" + c.id
	}
	if method == "private_key_jwt" {
		raw, _ := json.Marshal(req["jwks"])
		var set jose.JSONWebKeySet
		if json.Unmarshal(raw, &set) != nil || len(set.Keys) != 1 || !set.Keys[0].IsPublic() {
			oauthErr(w, 400, "invalid_client_metadata")
			return
		}
		c.pub = set.Keys[0].Key
	}
	s.clients[c.id] = c
	resp := map[string]any{"client_id": c.id, "token_endpoint_auth_method": method, "redirect_uris": c.redirects}
	if c.secret != "" {
		resp["client_secret"] = c.secret
	}
	if s.secretExpires != nil {
		resp["client_secret_expires_at"] = s.secretExpires
	}
	writeJSON(w, 201, resp)
}

func (s *testServer) lookupClient(id string) *tClient {
	if c := s.clients[id]; c != nil {
		return c
	}
	if s.cimd && id == s.URL+"/client-metadata.json" {
		return &tClient{id: id, method: "none", redirects: []string{"http://127.0.0.1:1/callback"}}
	}
	return nil
}

func (s *testServer) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.counts["authorize"]++
	s.authQuery = q
	c := s.lookupClient(q.Get("client_id"))
	redirect := q.Get("redirect_uri")
	if c == nil || (len(c.redirects) > 0 && !slices.Contains(c.redirects, redirect)) {
		http.Error(w, "unknown client or redirect", 400)
		return
	}
	if q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("resource") == "" {
		http.Error(w, "bad authorization request", 400)
		return
	}
	u, _ := url.Parse(redirect)
	back := url.Values{"state": {q.Get("state")}}
	switch {
	case s.wrongIss != "":
		back.Set("iss", s.wrongIss)
	case s.sendIss:
		back.Set("iss", s.docIssuer())
	}
	if s.denyAuthorize {
		back.Set("error", "access_denied")
	} else {
		code := s.nextID("code")
		s.codes[code] = &tCode{client: c.id, challenge: q.Get("code_challenge"), redirect: redirect, resource: q.Get("resource"), scope: q.Get("scope")}
		back.Set("code", code)
	}
	u.RawQuery = back.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// authClient authenticates the client of a token request; "" on failure
// (the error is written).
func (s *testServer) authClient(w http.ResponseWriter, r *http.Request, form url.Values) (*tClient, bool) {
	id, secret, basic := r.BasicAuth()
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret = form.Get("client_id"), form.Get("client_secret")
	}
	if form.Get("client_assertion_type") != "" {
		return s.checkAssertion(w, form)
	}
	c := s.lookupClient(id)
	if c == nil {
		if id == "" && form.Get("grant_type") == jwtBearerGrantType {
			return nil, true // anonymous assertion grant
		}
		oauthErr(w, 401, "invalid_client")
		return nil, false
	}
	var authed bool
	switch c.method {
	case "client_secret_basic":
		authed = basic && secret == c.secret
	case "client_secret_post":
		authed = !basic && secret == c.secret
	case "none":
		authed = secret == ""
	}
	if !authed {
		oauthErr(w, 401, "invalid_client")
		return nil, false
	}
	return c, true
}

func (s *testServer) checkAssertion(w http.ResponseWriter, form url.Values) (*tClient, bool) {
	fail := func() (*tClient, bool) { oauthErr(w, 401, "invalid_client"); return nil, false }
	if form.Get("client_assertion_type") != clientAssertionType {
		return fail()
	}
	jws, err := jose.ParseSignedCompact(form.Get("client_assertion"), []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA})
	if err != nil {
		return fail()
	}
	var claims struct {
		Iss, Sub, Aud, Jti string
		Exp                int64
	}
	unverified := jws.UnsafePayloadWithoutVerification()
	if json.Unmarshal(unverified, &claims) != nil {
		return fail()
	}
	c := s.lookupClient(claims.Iss)
	if c == nil || c.pub == nil || c.method != "private_key_jwt" {
		return fail()
	}
	if _, err := jws.Verify(c.pub); err != nil {
		return fail()
	}
	if claims.Sub != claims.Iss || (claims.Aud != s.issuer() && claims.Aud != s.URL+"/token") ||
		claims.Exp < time.Now().Unix() || claims.Jti == "" || s.jtis[claims.Jti] {
		return fail()
	}
	if id := form.Get("client_id"); id != "" && id != c.id {
		return fail()
	}
	s.jtis[claims.Jti] = true
	return c, true
}

// checkDPoP verifies a DPoP proof for method+url and returns the key
// thumbprint; "" with ok=false after writing an error.
func (s *testServer) checkDPoP(w http.ResponseWriter, r *http.Request, accessToken string, resource bool) (string, bool) {
	proof := r.Header.Get("DPoP")
	fail := func(code string) (string, bool) {
		if w.Header().Get("DPoP-Nonce") == "" {
			w.Header().Set("DPoP-Nonce", s.nonce)
		}
		if resource {
			w.Header().Set("WWW-Authenticate", fmt.Sprintf(`DPoP error=%q`, code))
			w.WriteHeader(401)
			return "", false
		}
		oauthErr(w, 400, code)
		return "", false
	}
	if proof == "" {
		return fail("invalid_dpop_proof")
	}
	jws, err := jose.ParseSignedCompact(proof, []jose.SignatureAlgorithm{jose.ES256, jose.RS256, jose.EdDSA})
	if err != nil || len(jws.Signatures) != 1 {
		return fail("invalid_dpop_proof")
	}
	h := jws.Signatures[0].Protected
	if h.ExtraHeaders[jose.HeaderType] != "dpop+jwt" || h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() {
		return fail("invalid_dpop_proof")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return fail("invalid_dpop_proof")
	}
	var c struct {
		Jti, Htm, Htu, Ath, Nonce string
		Iat                       int64
	}
	if json.Unmarshal(payload, &c) != nil || c.Jti == "" || s.jtis[c.Jti] || c.Htm != r.Method || c.Htu != "http://"+r.Host+r.URL.Path {
		return fail("invalid_dpop_proof")
	}
	if resource {
		sum := sha256.Sum256([]byte(accessToken))
		if c.Ath != base64.RawURLEncoding.EncodeToString(sum[:]) {
			return fail("invalid_dpop_proof")
		}
	}
	if s.dpopNonce && c.Nonce != s.nonce {
		return fail("use_dpop_nonce")
	}
	s.jtis[c.Jti] = true
	tp, _ := h.JSONWebKey.Thumbprint(crypto.SHA256)
	return base64.RawURLEncoding.EncodeToString(tp), true
}

func (s *testServer) issue(w http.ResponseWriter, client, scope, resource, jkt string) {
	at := s.nextID("at")
	s.access[at] = &tAccess{scope: scope, resource: resource, jkt: jkt}
	ttl := s.accessTTL
	if ttl == 0 {
		ttl = 3600
	}
	resp := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": ttl, "scope": scope}
	if s.expiresIn != nil {
		resp["expires_in"] = s.expiresIn
	}
	if jkt != "" {
		resp["token_type"] = "DPoP"
	}
	if !s.noRefresh && client != "" {
		rt := s.nextID("rt")
		s.refresh[rt] = &tRefresh{client: client, scope: scope, resource: resource, jkt: jkt}
		resp["refresh_token"] = rt
	}
	if s.formTokens {
		form := url.Values{}
		for k, v := range resp {
			form.Set(k, fmt.Sprint(v))
		}
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded")
		fmt.Fprint(w, form.Encode())
		return
	}
	writeJSON(w, 200, resp)
}

func (s *testServer) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil || r.Method != http.MethodPost {
		oauthErr(w, 400, "invalid_request")
		return
	}
	form := r.PostForm
	s.forms = append(s.forms, form)
	gt := form.Get("grant_type")
	jkt := ""
	if s.dpop {
		var ok bool
		if jkt, ok = s.checkDPoP(w, r, "", false); !ok {
			return
		}
	}
	c, ok := s.authClient(w, r, form)
	if !ok {
		return
	}
	s.counts[gt]++
	if s.tokenDown {
		oauthErr(w, 503, "temporarily_unavailable")
		return
	}
	clientID := ""
	if c != nil {
		clientID = c.id
	}
	resource := form.Get("resource")
	if resource == "" {
		oauthErr(w, 400, "invalid_target")
		return
	}
	switch gt {
	case "authorization_code":
		code := s.codes[form.Get("code")]
		delete(s.codes, form.Get("code"))
		sum := sha256.Sum256([]byte(form.Get("code_verifier")))
		if code == nil || code.client != clientID || code.redirect != form.Get("redirect_uri") ||
			code.challenge != base64.RawURLEncoding.EncodeToString(sum[:]) || code.resource != resource {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		s.issue(w, clientID, code.scope, resource, jkt)
	case "refresh_token":
		rt := s.refresh[form.Get("refresh_token")]
		if rt == nil || rt.used || rt.client != clientID || rt.resource != resource || rt.jkt != jkt {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		rt.used = true // rotation: the old refresh token is dead
		s.issue(w, clientID, rt.scope, resource, jkt)
	case "client_credentials":
		if c == nil || c.method == "none" {
			oauthErr(w, 401, "invalid_client")
			return
		}
		s.issue(w, "", form.Get("scope"), resource, jkt)
	case deviceGrantType:
		d := s.devices[form.Get("device_code")]
		if d == nil || d.client != clientID {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		if d.failed < len(s.deviceFail) {
			f := s.deviceFail[d.failed]
			d.failed++
			if f == "drop" {
				conn, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					conn.Close()
				}
				return
			}
			code, _ := strconv.Atoi(f)
			http.Error(w, "unavailable", code)
			return
		}
		d.polls++
		switch {
		case d.polls <= s.deviceSlow:
			oauthErr(w, 400, "slow_down")
		case d.polls <= s.deviceSlow+s.devicePending:
			oauthErr(w, 400, "authorization_pending")
		default:
			delete(s.devices, form.Get("device_code"))
			s.issue(w, clientID, d.scope, d.resource, jkt)
		}
	case jwtBearerGrantType:
		if !s.checkGrantAssertion(form.Get("assertion")) {
			oauthErr(w, 400, "invalid_grant")
			return
		}
		s.issue(w, "", form.Get("scope"), resource, jkt)
	default:
		oauthErr(w, 400, "unsupported_grant_type")
	}
}

// checkGrantAssertion accepts a JWT signed by the workload key or an
// ID-JAG signed by the IdP key, with this issuer as audience.
func (s *testServer) checkGrantAssertion(a string) bool {
	jws, err := jose.ParseSignedCompact(a, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		return false
	}
	var payload []byte
	if s.workloadKey != nil {
		payload, err = jws.Verify(s.workloadKey)
	}
	if (s.workloadKey == nil || err != nil) && s.idpKey != nil {
		payload, err = jws.Verify(s.idpKey.Public())
	}
	if err != nil || payload == nil {
		return false
	}
	var c struct{ Aud string }
	return json.Unmarshal(payload, &c) == nil && c.Aud == s.issuer()
}

func (s *testServer) idpToken(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	s.counts["idp-"+f.Get("grant_type")]++
	if f.Get("grant_type") != tokenExchangeGrantType || f.Get("requested_token_type") != idJAGTokenType ||
		f.Get("subject_token") != "id-token-alice" || f.Get("subject_token_type") != idTokenType ||
		f.Get("audience") != s.issuer() || f.Get("resource") == "" {
		oauthErr(w, 400, "invalid_request")
		return
	}
	jag, err := signJWT(s.idpKey, "", "oauth-id-jag+jwt", false, map[string]any{
		"iss": s.URL + "/idp", "sub": "alice", "aud": s.issuer(), "resource": f.Get("resource"),
		"jti": newJTI(), "exp": time.Now().Add(time.Minute).Unix(),
	})
	if err != nil {
		oauthErr(w, 500, "server_error")
		return
	}
	writeJSON(w, 200, map[string]any{"access_token": jag, "issued_token_type": idJAGTokenType, "token_type": "N_A", "expires_in": 60})
}

func (s *testServer) device(w http.ResponseWriter, r *http.Request) {
	r.ParseForm()
	f := r.PostForm
	c := s.lookupClient(f.Get("client_id"))
	if c == nil || f.Get("resource") == "" {
		oauthErr(w, 400, "invalid_client")
		return
	}
	dc := s.nextID("dc")
	s.devices[dc] = &tDevice{client: c.id, scope: f.Get("scope"), resource: f.Get("resource")}
	resp := map[string]any{
		"device_code": dc, "user_code": "WDJB-MJHT", "verification_uri": s.URL + "/activate",
		"verification_uri_complete": s.URL + "/activate?user_code=WDJB-MJHT", "expires_in": 600, "interval": 1,
	}
	for k, v := range s.deviceAuth {
		resp[k] = v
	}
	writeJSON(w, 200, resp)
}

func (s *testServer) mcp(w http.ResponseWriter, r *http.Request) {
	authz := r.Header.Get("Authorization")
	s.mcpAuth = append(s.mcpAuth, authz)
	challenge := func(status int, extra string) {
		h := fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp"`, s.URL)
		if s.noPRM {
			h = "Bearer"
		}
		if extra != "" {
			h += ", " + extra
			if s.noPRM {
				h = "Bearer " + extra
			}
		}
		w.Header().Set("WWW-Authenticate", h)
		w.WriteHeader(status)
		s.counts[fmt.Sprintf("mcp%d", status)]++
	}
	scheme, tok, _ := strings.Cut(authz, " ")
	a := s.access[tok]
	if a == nil && s.trusted != nil {
		s.trusted.mu.Lock()
		a = s.trusted.access[tok]
		s.trusted.mu.Unlock()
	}
	if a == nil || a.expired || a.resource != s.mcpURL() {
		extra := `error="invalid_token"`
		if s.needScope != "" {
			extra = fmt.Sprintf(`scope="%s"`, s.needScope)
		}
		if authz == "" {
			extra = strings.TrimPrefix(extra, `error="invalid_token"`)
		}
		challenge(401, extra)
		return
	}
	if a.jkt != "" {
		if !strings.EqualFold(scheme, "DPoP") {
			challenge(401, `error="invalid_token"`)
			return
		}
		jkt, ok := s.checkDPoP(w, r, tok, true)
		if !ok {
			return
		}
		if jkt != a.jkt {
			challenge(401, `error="invalid_token"`)
			return
		}
	} else if !strings.EqualFold(scheme, "Bearer") {
		challenge(401, `error="invalid_token"`)
		return
	}
	granted := strings.Fields(a.scope)
	if s.needScope != "" && !slices.Contains(granted, s.needScope) {
		challenge(403, fmt.Sprintf(`error="insufficient_scope", scope="%s"`, s.needScope))
		return
	}
	if r.URL.Query().Get("op") == "write" && s.writeScope != "" && !slices.Contains(granted, s.writeScope) {
		challenge(403, fmt.Sprintf(`error="insufficient_scope", scope="%s"`, s.writeScope))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	var rpc struct {
		ID json.RawMessage `json:"id"`
	}
	if json.NewDecoder(r.Body).Decode(&rpc) == nil && len(rpc.ID) > 0 {
		// A JSON-RPC request (from the real transport): answer it.
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"scope":%s}}`, rpc.ID, strconv.Quote(a.scope))
		return
	}
	fmt.Fprintf(w, `{"ok":true,"scope":%s}`, strconv.Quote(a.scope))
}
