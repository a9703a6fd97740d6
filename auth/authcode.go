package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
)

// pendingAuth is what is recorded before redirecting the user: checked
// against the authorization response and used to redeem the code.
type pendingAuth struct {
	issuer   string // the authorization server's issuer (RFC 9207)
	state    string
	verifier string // PKCE code verifier
	resource string
	redirect string
	// issRequired is the server's
	// authorization_response_iss_parameter_supported.
	issRequired bool
}

func randomState() string {
	var b [24]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// redirectURL returns the redirect URI of the authorization code flow.
func (c *Client) redirectURL(ctx context.Context) (string, error) {
	if c.cfg.RedirectURL != "" {
		return c.cfg.RedirectURL, nil
	}
	if rp, ok := c.cfg.Interaction.(RedirectProvider); ok {
		return rp.RedirectURL(ctx)
	}
	return "", fmt.Errorf("%w: no Config.RedirectURL and the Interaction provides none", ErrInteractionRequired)
}

// authCodeFlow runs the authorization code grant with PKCE S256.
func (c *Client) authCodeFlow(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) (*Token, error) {
	if !meta.supportsS256() {
		return nil, fmt.Errorf("%w: %s lists code_challenge_methods_supported %q", ErrPKCEUnsupported, meta.Issuer, meta.CodeChallengeMethodsSupported)
	}
	if meta.AuthorizationEndpoint == "" || meta.TokenEndpoint == "" {
		return nil, &MetadataError{Kind: "authorization server", URLs: []string{meta.Issuer}, Err: errors.New("auth: metadata lacks authorization_endpoint or token_endpoint")}
	}
	if c.cfg.Interaction == nil {
		return nil, ErrInteractionRequired
	}
	redirect, err := c.redirectURL(ctx)
	if err != nil {
		return nil, err
	}
	reg, err := c.clientFor(ctx, meta, redirect)
	if err != nil {
		return nil, err
	}
	p := pendingAuth{
		issuer:      meta.Issuer,
		state:       randomState(),
		verifier:    oauth2.GenerateVerifier(),
		resource:    resource,
		redirect:    redirect,
		issRequired: meta.AuthorizationResponseIssParameterSupported,
	}
	conf := c.oauthConfig(meta, reg, redirect, scopes)
	authURL := conf.AuthCodeURL(p.state, oauth2.S256ChallengeOption(p.verifier), oauth2.SetAuthURLParam("resource", resource))
	back, err := c.cfg.Interaction.Authorize(ctx, authURL)
	if err != nil {
		return nil, fmt.Errorf("auth: authorization interaction: %w", err)
	}
	code, err := p.check(back)
	if err != nil {
		return nil, err
	}
	tctx := c.tokenContext(ctx, c.tokenCallFor(meta, reg, resource))
	ot, err := conf.Exchange(tctx, code, oauth2.VerifierOption(p.verifier), oauth2.SetAuthURLParam("resource", resource))
	if err != nil {
		return nil, tokenError(meta.TokenEndpoint, err)
	}
	return c.newToken(ot, meta.Issuer, resource, scopes), nil
}

// check validates an authorization response and returns its code. The
// order matters: state and iss are checked before the error fields are
// trusted (MCP 2026-07-28, RFC 9207): iss present ⇒ exact compare with
// the recorded issuer; iss absent while the server promises it ⇒ reject;
// neither ⇒ proceed.
func (p *pendingAuth) check(back *url.URL) (string, error) {
	if back == nil {
		return "", errors.New("auth: no authorization response")
	}
	q := back.Query()
	if len(q["state"]) != 1 || q.Get("state") != p.state {
		return "", ErrStateMismatch
	}
	if iss, ok := q["iss"]; ok {
		if len(iss) != 1 || iss[0] != p.issuer {
			return "", fmt.Errorf("%w: authorization response iss %q, expected %q", ErrIssuerMismatch, q.Get("iss"), p.issuer)
		}
	} else if p.issRequired {
		return "", fmt.Errorf("%w: authorization response without iss from %s, which advertises it", ErrIssuerMismatch, p.issuer)
	}
	if e := q.Get("error"); e != "" {
		return "", &AuthorizationResponseError{Code: e, Description: q.Get("error_description"), URI: q.Get("error_uri")}
	}
	code := q.Get("code")
	if code == "" {
		return "", errors.New("auth: authorization response without code")
	}
	return code, nil
}
