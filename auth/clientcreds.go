package auth

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// Grant type URIs.
const (
	deviceGrantType        = "urn:ietf:params:oauth:grant-type:device_code"
	jwtBearerGrantType     = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	tokenExchangeGrantType = "urn:ietf:params:oauth:grant-type:token-exchange"
	idJAGTokenType         = "urn:ietf:params:oauth:token-type:id-jag"
	idTokenType            = "urn:ietf:params:oauth:token-type:id_token"
)

// grantConfig returns an x/oauth2 client-credentials configuration for
// reg at meta; params may override grant_type (x/oauth2 allows that),
// which is how the device, JWT bearer and token exchange grants are sent.
func (c *Client) grantConfig(meta *ServerMetadata, reg *ClientRegistration, scopes []string, params url.Values) *clientcredentials.Config {
	conf := c.oauthConfig(meta, reg, "", scopes)
	return &clientcredentials.Config{
		ClientID:       conf.ClientID,
		ClientSecret:   conf.ClientSecret,
		TokenURL:       meta.TokenEndpoint,
		Scopes:         scopes,
		EndpointParams: params,
		AuthStyle:      conf.Endpoint.AuthStyle,
	}
}

// grant runs one token request built by grantConfig.
func (c *Client) grant(ctx context.Context, meta *ServerMetadata, reg *ClientRegistration, resource string, scopes []string, params url.Values) (*oauth2.Token, error) {
	if meta.TokenEndpoint == "" {
		return nil, &MetadataError{Kind: "authorization server", URLs: []string{meta.Issuer}, Err: errors.New("auth: metadata lacks token_endpoint")}
	}
	if reg == nil {
		reg = &ClientRegistration{AuthMethod: NoClientAuth}
	}
	tctx := c.tokenContext(ctx, c.tokenCallFor(meta, reg, resource))
	ot, err := c.grantConfig(meta, reg, scopes, params).Token(tctx)
	if err != nil {
		return nil, tokenError(meta.TokenEndpoint, err)
	}
	return ot, nil
}

// clientCredentials runs the client_credentials grant (secret or
// private_key_jwt).
func (c *Client) clientCredentials(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) (*Token, error) {
	reg, err := c.clientFor(ctx, meta, "")
	if err != nil {
		return nil, err
	}
	ot, err := c.grant(ctx, meta, reg, resource, scopes, nil)
	if err != nil {
		return nil, err
	}
	return c.newToken(ot, meta.Issuer, resource, scopes), nil
}

// jwtBearer runs the JWT bearer grant (RFC 7523 §2.1) with the assertion
// from Config.Assertion. Client authentication is used when credentials
// are known (never registered for this grant).
func (c *Client) jwtBearer(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) (*Token, error) {
	assertion, err := c.cfg.Assertion(ctx, meta.Issuer)
	if err != nil {
		return nil, fmt.Errorf("auth: getting JWT bearer assertion: %w", err)
	}
	return c.presentAssertion(ctx, meta, resource, scopes, assertion)
}

func (c *Client) presentAssertion(ctx context.Context, meta *ServerMetadata, resource string, scopes []string, assertion string) (*Token, error) {
	reg, err := c.knownClient(ctx, meta)
	if err != nil {
		return nil, err
	}
	ot, err := c.grant(ctx, meta, reg, resource, scopes, url.Values{
		"grant_type": {jwtBearerGrantType},
		"assertion":  {assertion},
	})
	if err != nil {
		return nil, err
	}
	return c.newToken(ot, meta.Issuer, resource, scopes), nil
}

// tokenExchange runs enterprise-managed authorization: RFC 8693 token
// exchange at the identity provider for an ID-JAG whose audience is the
// MCP authorization server, then the JWT bearer grant with it.
func (c *Client) tokenExchange(ctx context.Context, meta *ServerMetadata, resource string, scopes []string) (*Token, error) {
	te := c.cfg.TokenExchange
	subject, err := te.SubjectToken(ctx)
	if err != nil {
		return nil, fmt.Errorf("auth: getting subject token: %w", err)
	}
	stt := te.SubjectTokenType
	if stt == "" {
		stt = idTokenType
	}
	if err := checkSecure(te.TokenEndpoint); err != nil {
		return nil, err
	}
	idp := &ServerMetadata{Issuer: te.TokenEndpoint, TokenEndpoint: te.TokenEndpoint}
	var reg *ClientRegistration
	if te.ClientID != "" {
		reg = &ClientRegistration{ClientID: te.ClientID, ClientSecret: te.ClientSecret, AuthMethod: NoClientAuth}
		if te.ClientSecret != "" {
			reg.AuthMethod = ClientSecretBasic
		}
	}
	// The ID-JAG request carries no DPoP proof: the grant is bound later.
	tctx := c.tokenContext(ctx, tokenCall{params: url.Values{"resource": {resource}}})
	ot, err := c.grantConfigFor(idp, reg, scopes, url.Values{
		"grant_type":           {tokenExchangeGrantType},
		"requested_token_type": {idJAGTokenType},
		"audience":             {meta.Issuer},
		"subject_token":        {subject},
		"subject_token_type":   {stt},
	}).Token(tctx)
	if err != nil {
		return nil, tokenError(te.TokenEndpoint, err)
	}
	if itt, _ := ot.Extra("issued_token_type").(string); itt != "" && itt != idJAGTokenType {
		return nil, fmt.Errorf("auth: identity provider issued %q, not an ID-JAG", itt)
	}
	return c.presentAssertion(ctx, meta, resource, scopes, ot.AccessToken)
}

func (c *Client) grantConfigFor(meta *ServerMetadata, reg *ClientRegistration, scopes []string, params url.Values) *clientcredentials.Config {
	if reg == nil {
		reg = &ClientRegistration{AuthMethod: NoClientAuth}
	}
	return c.grantConfig(meta, reg, scopes, params)
}
