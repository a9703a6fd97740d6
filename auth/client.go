package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/conduitmcp/conduit/internal/storehealth"
	"github.com/conduitmcp/conduit/transport"
)

// Client obtains, stores, refreshes and presents the tokens for one MCP
// server. Use one Client per server URL; it is safe for concurrent use.
type Client struct {
	cfg    Config       // written once by New
	key    string       // canonical ServerURL: store key and default resource
	origin string       // origin of key: tokens go nowhere else
	hc     *http.Client // registration and the token endpoint: same-origin redirects only
	meta   *http.Client // metadata discovery: redirects anywhere but from https to http
	store  TokenStore   // never nil
	dpop   *dpopSigner  // nil without DPoPKey
	log    *slog.Logger // never nil
	sf     singleflight.Group
	now    func() time.Time // test seam
	// pollUnit is one second of device-flow interval; a test seam.
	pollUnit time.Duration
	// onPoll, when set, sees each device-flow wait (in interval units)
	// before it starts; a test seam.
	onPoll func(interval int64)

	// storeHealth logs the store's failures once per outage.
	storeHealth storehealth.Health

	mu      sync.Mutex // guards the fields below
	tok     *Token     // latest known token; nil if none
	tokUsed bool       // tok was handed out since it was obtained
	// A renewal of pause.tok (still valid) failed pause.n times in a row;
	// the next is not tried before pause.until (see renewalPaused).
	pause struct {
		tok   *Token
		n     int
		until time.Time
	}
	metas   map[string]*ServerMetadata
	scopes  []string // scopes of the last successful request
	stepUps map[string]int
}

// New returns a Client for cfg.ServerURL. It does no I/O. It fails when
// ServerURL is not an absolute http(s) URL or when the Method lacks its
// required settings.
func New(cfg Config) (*Client, error) {
	key, err := CanonicalResource(cfg.ServerURL)
	if err != nil {
		return nil, err
	}
	cfg.Scopes = slices.Clone(cfg.Scopes)
	if cfg.TokenExchange != nil {
		te := *cfg.TokenExchange
		cfg.TokenExchange = &te
	}
	switch cfg.Method {
	case AuthorizationCode, DeviceCode, ClientCredentials:
	case JWTBearer:
		if cfg.Assertion == nil {
			return nil, errors.New("auth: JWTBearer needs Config.Assertion")
		}
	case TokenExchange:
		if cfg.TokenExchange == nil || cfg.TokenExchange.SubjectToken == nil || cfg.TokenExchange.TokenEndpoint == "" {
			return nil, errors.New("auth: TokenExchange needs Config.TokenExchange with TokenEndpoint and SubjectToken")
		}
	default:
		return nil, fmt.Errorf("auth: unknown method %v", cfg.Method)
	}
	if cfg.PrivateKey != nil {
		if _, err := signingAlg(cfg.PrivateKey); err != nil {
			return nil, err
		}
	}
	c := &Client{
		cfg:      cfg,
		key:      key,
		origin:   origin(key),
		hc:       cfg.HTTPClient,
		store:    cfg.Store,
		log:      cfg.Logger,
		now:      time.Now,
		pollUnit: time.Second,
		metas:    map[string]*ServerMetadata{},
		stepUps:  map[string]int{},
	}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: defaultHTTPTimeout}
	}
	c.hc, c.meta = withRedirects(c.hc, sameOriginRedirects), withRedirects(c.hc, discoveryRedirects)
	if c.store == nil {
		c.store = &MemoryStore{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if cfg.DPoPKey != nil {
		if _, err := signingAlg(cfg.DPoPKey); err != nil {
			return nil, err
		}
		c.dpop = &dpopSigner{key: cfg.DPoPKey}
	}
	return c, nil
}

// Compile-time checks: the Client plugs into the transport.
var _ transport.TokenSource = (*Client)(nil)

func (c *Client) skew() time.Duration {
	switch {
	case c.cfg.RefreshSkew == 0:
		return DefaultRefreshSkew
	case c.cfg.RefreshSkew < 0:
		return 0
	}
	return c.cfg.RefreshSkew
}

// adopt makes t the current token, not yet handed out.
func (c *Client) adopt(t *Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tok, c.tokUsed = t, false
}

// forget drops the current token from memory.
func (c *Client) forget() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tok, c.tokUsed = nil, false
}

func (c *Client) markUsed(t *Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tok == t {
		c.tokUsed = true
	}
}

// Token returns the access token to send to the MCP server, refreshing it
// first when it expires within [Config.RefreshSkew] (without a refresh
// token, or while the refresh fails, it is used until it expires; a
// failed renewal is tried again after a pause of 1 s, doubled at each
// failure up to 30 s, not at every call). It
// returns "" and no error when there is no token yet, or no longer one
// (the server's 401 then leads to [Client.Authorize]). It implements
// transport.TokenSource; it may block for a refresh, bounded by ctx, and
// may be called concurrently.
//
// A DPoP-bound token cannot be sent as a bearer token: with
// [Config.DPoPKey] use [Client.Header] or [Client.RoundTripper] instead.
func (c *Client) Token(ctx context.Context) (string, error) {
	t, err := c.validToken(ctx)
	if err != nil || t == nil {
		return "", err
	}
	if t.dpop() {
		return "", errors.New("auth: DPoP-bound token: use Client.Header or Client.RoundTripper, not a bearer TokenSource")
	}
	return t.AccessToken, nil
}

// TokenFor is [Client.Token] for a request to requestURL: it returns
// [ErrWrongOrigin] when requestURL is not on the protected resource's
// origin, so a token never reaches another server.
func (c *Client) TokenFor(ctx context.Context, requestURL string) (string, error) {
	if origin(requestURL) != c.origin {
		return "", ErrWrongOrigin
	}
	return c.Token(ctx)
}

// Header sets the credentials of req: "Authorization: Bearer …", or
// "Authorization: DPoP …" with a DPoP proof for a DPoP-bound token. A
// request to another origin than the protected resource's gets nothing.
// Its signature matches transport.StreamableHTTP.HeaderFunc. It may block
// for a refresh and may be called concurrently.
func (c *Client) Header(ctx context.Context, req *http.Request) error {
	if origin(req.URL.String()) != c.origin {
		return nil
	}
	t, err := c.validToken(ctx)
	if err != nil || t == nil {
		return err
	}
	if !t.dpop() {
		req.Header.Set("Authorization", "Bearer "+t.AccessToken)
		return nil
	}
	if c.dpop == nil {
		return errors.New("auth: DPoP-bound token but no Config.DPoPKey")
	}
	proof, err := c.dpop.proof(req.Method, req.URL.String(), t.AccessToken, c.now())
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "DPoP "+t.AccessToken)
	req.Header.Set("DPoP", proof)
	return nil
}

// validToken returns a usable token, refreshing or (for non-interactive
// methods, once a token existed) re-obtaining it; nil when there is none.
func (c *Client) validToken(ctx context.Context) (*Token, error) {
	c.mu.Lock()
	t := c.tok
	c.mu.Unlock()
	if t == nil {
		st, err := c.loadToken(ctx)
		if err != nil {
			err = storeErr("load token", err)
			c.storeFailed(err)
			return nil, err
		}
		if st == nil {
			return nil, nil
		}
		c.mu.Lock()
		if c.tok == nil {
			c.tok, c.tokUsed = st, false
		}
		t = c.tok
		c.mu.Unlock()
	}
	if t.fresh(c.now(), c.skew()) || c.renewalPaused(t) {
		c.markUsed(t)
		return t, nil
	}
	nt, err := c.refresh(ctx, t.AccessToken)
	if err == nil {
		c.markUsed(nt)
		return nt, nil
	}
	if _, ok := errors.AsType[*StoreError](err); ok {
		c.storeFailed(err)
	}
	if errors.Is(err, ErrNoRefreshToken) || errors.Is(err, ErrRefreshTokenRejected) {
		if c.cfg.Method.interactive() {
			// No refresh token: the token is used until it expires;
			// only then is the user needed.
			if c.stillValid(ctx, t) {
				c.renewalFailed(t)
				return t, nil
			}
			return nil, nil
		}
		// A service re-obtains its token without anyone's help.
		if err = c.authorizeShared(ctx, Challenge{}, nil); err == nil {
			c.mu.Lock()
			t = c.tok
			c.mu.Unlock()
			if t != nil {
				c.markUsed(t)
			}
			return t, nil
		}
	}
	if c.stillValid(ctx, t) {
		// Degraded: the store cannot grant the renewal, or the
		// authorization server does not answer it; the token held here
		// is still valid.
		c.log.Debug("auth: renewing the token before it expires failed; using it until then", "err", err)
		c.renewalFailed(t)
		return t, nil
	}
	return nil, err
}

// renewalPaused reports whether t, due for renewal, is still valid and a
// renewal of it failed a moment ago: it is then used as it is, so that a
// failing token endpoint gets one request per pause, not one per call.
func (c *Client) renewalPaused(t *Token) bool {
	c.mu.Lock()
	paused := c.pause.tok == t && c.now().Before(c.pause.until)
	c.mu.Unlock()
	return paused && t.fresh(c.now(), 0)
}

// renewalFailed notes that a renewal of t, still valid, failed: the next
// is tried after a pause of 1 s, doubled at each failure in a row up to
// 30 s.
func (c *Client) renewalFailed(t *Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pause.tok != t {
		c.pause.tok, c.pause.n = t, 0
	}
	c.pause.n++
	c.pause.until = c.now().Add(min(time.Second<<min(c.pause.n-1, 5), 30*time.Second))
}

// stillValid reports whether t, whose renewal failed, is still the
// current token (not dropped by a rejected refresh) and has not expired,
// and if so marks it handed out. A context that ended makes it false.
func (c *Client) stillValid(ctx context.Context, t *Token) bool {
	c.mu.Lock()
	held := c.tok == t
	c.mu.Unlock()
	if ctx.Err() != nil || !held || !t.fresh(c.now(), 0) {
		return false
	}
	c.markUsed(t)
	return true
}

// Authorize handles a 401 or 403 response of the MCP server, given as the
// transport's *transport.HTTPError; when it returns nil the caller should
// retry the request. Its signature matches the connection engine's Authorize hook.
//
//   - 401: if a token obtained after the failed request is available (a
//     token not yet handed out by Token or Header) it returns at once;
//     else it refreshes the token (one refresh shared by concurrent
//     callers and, with a [RefreshLeaser] store, by other processes); when there
//     is no usable refresh token, or the resource's metadata names another
//     authorization server, it runs discovery and the configured [Method]
//     (one flow shared by concurrent callers). The HTTP error does not say
//     which token the failed request carried, so a 401 handled after a
//     retry already used the new token refreshes once more (with the
//     current refresh token, so no rotation conflict).
//   - 403 with error="insufficient_scope": step-up authorization for the
//     union of the previously requested and the challenged scopes, at
//     most [Config.MaxStepUps] times per resource and scope set
//     ([ErrStepUpLimit]).
//   - other 403: [ErrForbidden]; any other error: [ErrNotAuthChallenge].
func (c *Client) Authorize(ctx context.Context, challenge *transport.HTTPError) error {
	if challenge == nil || (challenge.StatusCode != http.StatusUnauthorized && challenge.StatusCode != http.StatusForbidden) {
		return ErrNotAuthChallenge
	}
	ch, _ := findChallenge(ParseChallenges(challenge.WWWAuthenticate), "Bearer", "DPoP")
	if challenge.StatusCode == http.StatusForbidden {
		if ch.Error() != "insufficient_scope" {
			return fmt.Errorf("%w: HTTP 403 without an insufficient_scope challenge", ErrForbidden)
		}
		return c.stepUp(ctx, ch)
	}
	if ch.Error() == "use_dpop_nonce" {
		return errors.New("auth: the server requires a DPoP nonce: use Client.RoundTripper")
	}
	c.mu.Lock()
	cur, used := c.tok, c.tokUsed
	c.mu.Unlock()
	if cur != nil && !used && cur.fresh(c.now(), 0) {
		// The failed request cannot have carried this token: it was
		// obtained (by a concurrent refresh or flow) and not yet handed
		// out. Retry with it.
		return nil
	}
	stale := ""
	if cur != nil {
		stale = cur.AccessToken
		if c.issuerMoved(ctx, ch, cur) {
			// The resource now names another authorization server: its
			// old tokens are useless; register and authorize anew.
			if err := c.dropToken(ctx, cur); err != nil {
				return err
			}
			return c.authorizeShared(ctx, ch, nil)
		}
	}
	_, err := c.refresh(ctx, stale)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrNoRefreshToken) && !errors.Is(err, ErrRefreshTokenRejected) {
		return err
	}
	return c.authorizeShared(ctx, ch, nil)
}

// issuerMoved reports whether the challenge's resource metadata no
// longer lists the issuer of tok. Only a challenge naming its metadata is
// checked (no well-known probing on every 401); failures count as "not
// moved" (the full flow will report them).
func (c *Client) issuerMoved(ctx context.Context, ch Challenge, tok *Token) bool {
	if ch.ResourceMetadata() == "" || tok.Issuer == "" {
		return false
	}
	prm, err := fetchPRM(ctx, c.meta, c.key, ch.ResourceMetadata())
	return err == nil && prm != nil && !slices.Contains(prm.AuthorizationServers, tok.Issuer)
}

// dropToken deletes tok from the store (if it is still the stored one)
// and from memory.
func (c *Client) dropToken(ctx context.Context, tok *Token) error {
	ctx, release, err := c.lease(ctx)
	if err != nil {
		return err
	}
	defer release()
	st, err := c.loadToken(ctx)
	if err != nil {
		return storeErr("load token", err)
	}
	if st != nil && st.AccessToken == tok.AccessToken {
		if err := c.store.SaveToken(ctx, c.key, nil); err != nil {
			return storeErr("save token", err)
		}
	}
	c.forget()
	return nil
}

func (c *Client) stepUp(ctx context.Context, ch Challenge) error {
	max := c.cfg.MaxStepUps
	if max == 0 {
		max = DefaultMaxStepUps
	}
	challenged := ch.Scopes()
	c.mu.Lock()
	prev := c.scopes
	if prev == nil && c.tok != nil {
		prev = c.tok.Scopes
	}
	want := unionScopes(prev, challenged)
	k := c.key + " " + strings.Join(want, " ")
	if c.stepUps[k] >= max {
		c.mu.Unlock()
		return fmt.Errorf("%w: %d attempts for scopes %q", ErrStepUpLimit, c.stepUps[k], want)
	}
	c.stepUps[k]++
	c.mu.Unlock()
	return c.authorizeShared(ctx, ch, want)
}

// unionScopes returns the sorted union of a and b.
func unionScopes(a, b []string) []string {
	set := map[string]bool{}
	for _, s := range append(slices.Clone(a), b...) {
		if s != "" {
			set[s] = true
		}
	}
	out := make([]string, 0, len(set))
	for s := range set {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// authorizeShared runs authorizeFull once for all concurrent callers with
// the same scope request. The flow runs with the first caller's context;
// every caller stops waiting when its own context ends, and when the
// first caller's context ends the flow, the callers still waiting run it
// again rather than fail with an error that is not theirs.
func (c *Client) authorizeShared(ctx context.Context, ch Challenge, scopes []string) error {
	key := "authorize " + strings.Join(scopes, " ")
	for {
		res := c.sf.DoChan(key, func() (any, error) {
			err := c.authorizeFull(ctx, ch, scopes)
			if err != nil && ctx.Err() != nil {
				return nil, &callerLeft{err}
			}
			return nil, err
		})
		select {
		case r := <-res:
			if left, ok := errors.AsType[*callerLeft](r.Err); ok {
				if ctx.Err() != nil {
					return left.err
				}
				continue // another caller's context ended the flow
			}
			return r.Err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// authorizeFull discovers the authorization server and obtains a new
// token with the configured method.
func (c *Client) authorizeFull(ctx context.Context, ch Challenge, explicit []string) error {
	prm, err := fetchPRM(ctx, c.meta, c.key, ch.ResourceMetadata())
	if err != nil {
		return err
	}
	issuer, resource := origin(c.key), c.key
	if prm != nil {
		issuer = prm.AuthorizationServers[0]
		if prm.Resource != "" {
			if r, err := CanonicalResource(prm.Resource); err == nil {
				resource = r
			}
		}
	}
	meta, err := c.serverMetadata(ctx, issuer, prm == nil, true)
	if err != nil {
		return err
	}
	scopes := explicit
	if scopes == nil {
		switch {
		case c.cfg.Scopes != nil:
			scopes = c.cfg.Scopes
		case len(ch.Scopes()) > 0:
			scopes = ch.Scopes()
		case prm != nil:
			scopes = prm.ScopesSupported
		}
	}
	scopes = slices.Clone(scopes)
	if c.cfg.Method.interactive() && !c.cfg.DisableOfflineAccess &&
		slices.Contains(meta.ScopesSupported, "offline_access") && !slices.Contains(scopes, "offline_access") {
		scopes = append(scopes, "offline_access")
	}
	var tok *Token
	switch c.cfg.Method {
	case AuthorizationCode:
		tok, err = c.authCodeFlow(ctx, meta, resource, scopes)
	case DeviceCode:
		tok, err = c.deviceFlow(ctx, meta, resource, scopes)
	case ClientCredentials:
		tok, err = c.clientCredentials(ctx, meta, resource, scopes)
	case JWTBearer:
		tok, err = c.jwtBearer(ctx, meta, resource, scopes)
	case TokenExchange:
		tok, err = c.tokenExchange(ctx, meta, resource, scopes)
	}
	if err != nil {
		return err
	}
	tok.LegacyDiscovery = meta.legacy
	if err := c.saveToken(ctx, tok); err != nil {
		return err
	}
	c.mu.Lock()
	c.scopes = scopes
	c.mu.Unlock()
	c.log.Debug("auth: obtained token", "method", c.cfg.Method, "issuer", meta.Issuer, "scopes", tok.Scopes)
	return nil
}

// saveToken stores tok (holding the key's lease, so no other process is
// mid-refresh) and makes it current.
func (c *Client) saveToken(ctx context.Context, tok *Token) error {
	ctx, release, err := c.lease(ctx)
	if err != nil {
		return err
	}
	defer release()
	if err := c.store.SaveToken(ctx, c.key, tok); err != nil {
		return storeErr("save token", err)
	}
	c.adopt(tok)
	return nil
}

// storeFailed logs err, a [*StoreError], unless the store's failure was
// logged already and it has not worked since.
// loadToken is the store's LoadToken of c's key, a value that does not
// open or decode ([ErrCorruptValue]) taken as none (and logged), so that
// the next authorization replaces it.
func (c *Client) loadToken(ctx context.Context) (*Token, error) {
	t, err := c.store.LoadToken(ctx, c.key)
	if errors.Is(err, ErrCorruptValue) {
		c.log.Warn("auth: the stored token does not open or decode; taking it as none, to be replaced by the next authorization", "err", err)
		return nil, nil
	}
	return t, err
}

// loadClient is the store's LoadClient of issuer, with an
// [ErrCorruptValue] taken as none, as loadToken does.
func (c *Client) loadClient(ctx context.Context, issuer string) (*ClientRegistration, error) {
	r, err := c.store.LoadClient(ctx, issuer)
	if errors.Is(err, ErrCorruptValue) {
		c.log.Warn("auth: the stored client registration does not open or decode; taking it as none, to be replaced by the next registration", "err", err)
		return nil, nil
	}
	return r, err
}

func (c *Client) storeFailed(err error) {
	c.storeHealth.Failed(c.log, "auth: token store failing; using the token held in memory until it works again", err)
}

// storeUp records that a store call started at started worked, logging it
// when the store had failed.
func (c *Client) storeUp(started time.Time) {
	c.storeHealth.Succeeded(c.log, "auth: token store works again", started)
}

// serverMetadata returns the metadata of issuer, from the cache unless
// reload is set.
func (c *Client) serverMetadata(ctx context.Context, issuer string, legacy, reload bool) (*ServerMetadata, error) {
	c.mu.Lock()
	m := c.metas[issuer]
	c.mu.Unlock()
	if m != nil && !reload {
		return m, nil
	}
	m, err := fetchServerMetadata(ctx, c.meta, issuer, legacy)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.metas[issuer] = m
	c.mu.Unlock()
	return m, nil
}

// oauthConfig returns the x/oauth2 configuration for reg at meta.
func (c *Client) oauthConfig(meta *ServerMetadata, reg *ClientRegistration, redirect string, scopes []string) *oauth2.Config {
	style, secret := oauth2.AuthStyleInParams, ""
	switch reg.AuthMethod {
	case ClientSecretBasic:
		style, secret = oauth2.AuthStyleInHeader, reg.ClientSecret
	case ClientSecretPost:
		secret = reg.ClientSecret
	}
	return &oauth2.Config{
		ClientID:     reg.ClientID,
		ClientSecret: secret,
		Endpoint: oauth2.Endpoint{
			AuthURL:       meta.AuthorizationEndpoint,
			TokenURL:      meta.TokenEndpoint,
			DeviceAuthURL: meta.DeviceAuthorizationEndpoint,
			AuthStyle:     style,
		},
		RedirectURL: redirect,
		Scopes:      scopes,
	}
}

// tokenCallFor returns the additions to token requests for reg at meta.
func (c *Client) tokenCallFor(meta *ServerMetadata, reg *ClientRegistration, resource string) tokenCall {
	call := tokenCall{params: url.Values{"resource": {resource}}, dpop: c.dpop}
	if reg != nil && reg.AuthMethod == PrivateKeyJWT {
		key, kid, id, aud := c.cfg.PrivateKey, c.cfg.KeyID, reg.ClientID, meta.Issuer
		call.assertion = func() (string, error) {
			if key == nil {
				return "", errors.New("auth: private_key_jwt needs Config.PrivateKey")
			}
			return clientAssertion(key, kid, id, aud, c.now())
		}
	}
	return call
}

// newToken converts an x/oauth2 token.
func (c *Client) newToken(ot *oauth2.Token, issuer, resource string, requested []string) *Token {
	t := &Token{
		AccessToken:  ot.AccessToken,
		TokenType:    ot.TokenType,
		RefreshToken: ot.RefreshToken,
		IssuedAt:     c.now(),
		Scopes:       slices.Clone(requested),
		Issuer:       issuer,
		Resource:     resource,
	}
	if d, ok := expiresIn(ot); ok {
		// The freshness checks use the client's clock: date the
		// lifetime from that one.
		t.Expiry = t.IssuedAt.Add(d)
	}
	if s, ok := ot.Extra("scope").(string); ok && s != "" {
		t.Scopes = strings.Fields(s)
	}
	return t
}

// maxExpiresIn caps a peer's expires_in, in seconds (about 68 years), as
// x/oauth2 caps it in JSON token responses.
const maxExpiresIn = math.MaxInt32

// expiresIn returns the lifetime the token response gave ot (expires_in),
// as [peerLifetime] reads it; without one the token's expiry is unknown
// (it is used until the server refuses it). It reads the raw value rather
// than ot.Expiry: x/oauth2 multiplies a form-encoded expires_in into a
// time.Duration unchecked (a huge value wraps around, to a token stale on
// arrival) and wraps a JSON one below -2^31 into an int32.
func expiresIn(ot *oauth2.Token) (time.Duration, bool) {
	return peerLifetime(ot.Extra("expires_in"))
}

// peerLifetime converts a peer's expires_in (a JSON number, an integer,
// or a numeric string) into a duration capped at maxExpiresIn seconds. It
// reports false when v is no usable lifetime: absent, not a number, zero
// or negative.
func peerLifetime(v any) (time.Duration, bool) {
	var secs float64
	switch v := v.(type) {
	case float64:
		secs = v
	case int64:
		secs = float64(v)
	case string:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return 0, false
		}
		secs = f
	default:
		return 0, false
	}
	if !(secs > 0) { // also NaN
		return 0, false
	}
	return time.Duration(min(secs, maxExpiresIn) * float64(time.Second)), true
}
