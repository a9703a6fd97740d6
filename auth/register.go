package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
)

// preRegistered returns the configured credentials if they apply to meta.
func (c *Client) preRegistered(meta *ServerMetadata) *ClientRegistration {
	if c.cfg.ClientID == "" || (c.cfg.ClientIssuer != "" && c.cfg.ClientIssuer != meta.Issuer) {
		return nil
	}
	m := c.cfg.AuthMethod
	if m == "" {
		m = c.chooseAuthMethod(meta, c.cfg.ClientSecret != "")
	}
	return &ClientRegistration{
		Issuer:       meta.Issuer,
		ClientID:     c.cfg.ClientID,
		ClientSecret: c.cfg.ClientSecret,
		AuthMethod:   m,
	}
}

// chooseAuthMethod picks the token endpoint authentication method for a
// client with (or without) a secret.
func (c *Client) chooseAuthMethod(meta *ServerMetadata, hasSecret bool) ClientAuthMethod {
	switch {
	case c.cfg.PrivateKey != nil:
		return PrivateKeyJWT
	case hasSecret:
		ms := meta.authMethods()
		if !slices.Contains(ms, string(ClientSecretBasic)) && slices.Contains(ms, string(ClientSecretPost)) {
			return ClientSecretPost
		}
		return ClientSecretBasic
	}
	return NoClientAuth
}

// knownClient returns credentials for meta without registering: the
// configured ones, a stored registration for this issuer, or the Client ID
// Metadata Document. nil when there are none.
func (c *Client) knownClient(ctx context.Context, meta *ServerMetadata) (*ClientRegistration, error) {
	if r := c.preRegistered(meta); r != nil {
		return r, nil
	}
	st, err := c.loadClient(ctx, meta.Issuer)
	if err != nil {
		return nil, storeErr("load client", err)
	}
	if st != nil && st.Issuer == meta.Issuer && (st.ClientSecret == "" || st.SecretExpiresAt.IsZero() || c.now().Before(st.SecretExpiresAt)) {
		return st, nil
	}
	if c.cfg.ClientMetadataURL != "" && meta.ClientIDMetadataDocumentSupported {
		m := NoClientAuth
		if c.cfg.PrivateKey != nil {
			m = PrivateKeyJWT
		}
		return &ClientRegistration{Issuer: meta.Issuer, ClientID: c.cfg.ClientMetadataURL, AuthMethod: m}, nil
	}
	return nil, nil
}

// clientFor returns the client credentials to use with meta, in the MCP
// priority order: pre-registered, stored registration for this issuer
// (covering redirect, if any), Client ID Metadata Document, Dynamic
// Client Registration; else a [*CredentialsRequiredError].
func (c *Client) clientFor(ctx context.Context, meta *ServerMetadata, redirect string) (*ClientRegistration, error) {
	r, err := c.knownClient(ctx, meta)
	if err != nil {
		return nil, err
	}
	if r != nil && (redirect == "" || r.ClientID == c.cfg.ClientID || r.ClientID == c.cfg.ClientMetadataURL || slices.Contains(r.RedirectURIs, redirect)) {
		return r, nil
	}
	if meta.RegistrationEndpoint == "" {
		reason := "no registration_endpoint"
		if c.cfg.ClientMetadataURL != "" {
			reason += " and no client_id_metadata_document_supported"
		}
		return nil, &CredentialsRequiredError{Issuer: meta.Issuer, Reason: reason}
	}
	r, err = c.register(ctx, meta, redirect)
	if err != nil {
		return nil, err
	}
	if err := c.store.SaveClient(ctx, meta.Issuer, r); err != nil {
		return nil, storeErr("save client", err)
	}
	return r, nil
}

// registrationRequest is the RFC 7591 client metadata we send.
type registrationRequest struct {
	ClientName              string              `json:"client_name"`
	RedirectURIs            []string            `json:"redirect_uris,omitempty"`
	GrantTypes              []string            `json:"grant_types"`
	ResponseTypes           []string            `json:"response_types"`
	TokenEndpointAuthMethod string              `json:"token_endpoint_auth_method"`
	ApplicationType         string              `json:"application_type"`
	JWKS                    *jose.JSONWebKeySet `json:"jwks,omitempty"`
}

type registrationResponse struct {
	ClientID                string      `json:"client_id"`
	ClientSecret            string      `json:"client_secret"`
	ClientSecretExpiresAt   json.Number `json:"client_secret_expires_at"` // servers send fractions and strings too
	TokenEndpointAuthMethod string      `json:"token_endpoint_auth_method"`
	RedirectURIs            []string    `json:"redirect_uris"`
	Error                   string      `json:"error"`
	ErrorDescription        string      `json:"error_description"`
}

// maxSecretExpiresAt is the latest client_secret_expires_at kept as a
// date: 9999-12-31T23:59:59Z, the last second time.Time's JSON form (in
// which [FileStore] records it) holds. A later one means never.
const maxSecretExpiresAt = 253402300799

// registrationFor is the Dynamic Client Registration request of this
// client's method, key and redirect URI.
func (c *Client) registrationFor(redirect string) registrationRequest {
	name := c.cfg.ClientName
	if name == "" {
		name = "Conduit MCP client"
	}
	rr := registrationRequest{ClientName: name, ResponseTypes: []string{}}
	switch c.cfg.Method {
	case AuthorizationCode:
		rr.RedirectURIs = []string{redirect}
		rr.GrantTypes = []string{"authorization_code", "refresh_token"}
		rr.ResponseTypes = []string{"code"}
		rr.TokenEndpointAuthMethod = string(NoClientAuth)
	case DeviceCode:
		rr.GrantTypes = []string{deviceGrantType, "refresh_token"}
		rr.TokenEndpointAuthMethod = string(NoClientAuth)
	default:
		rr.GrantTypes = []string{"client_credentials"}
		rr.TokenEndpointAuthMethod = string(ClientSecretBasic)
	}
	if c.cfg.PrivateKey != nil {
		rr.TokenEndpointAuthMethod = string(PrivateKeyJWT)
		alg, _ := signingAlg(c.cfg.PrivateKey)
		rr.JWKS = &jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{
			Key: c.cfg.PrivateKey.Public(), KeyID: c.cfg.KeyID, Use: "sig", Algorithm: string(alg),
		}}}
	}
	// MCP 2026-07-28: application_type is required; "native" for
	// desktop/CLI clients with loopback redirects, "web" otherwise.
	rr.ApplicationType = "web"
	if c.cfg.Method == DeviceCode || isLoopbackRedirect(redirect) {
		rr.ApplicationType = "native"
	}
	return rr
}

// register performs Dynamic Client Registration (RFC 7591).
func (c *Client) register(ctx context.Context, meta *ServerMetadata, redirect string) (*ClientRegistration, error) {
	rr := c.registrationFor(redirect)
	body, err := json.Marshal(rr)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, meta.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("auth: registering client at %s: %w", meta.RegistrationEndpoint, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody))
	if err != nil {
		return nil, fmt.Errorf("auth: registering client: %w", err)
	}
	var out registrationResponse
	jerr := json.Unmarshal(b, &out)
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, &RegistrationError{Endpoint: meta.RegistrationEndpoint, StatusCode: resp.StatusCode, Code: out.Error, Description: out.ErrorDescription}
	}
	if jerr != nil || out.ClientID == "" {
		return nil, &RegistrationError{Endpoint: meta.RegistrationEndpoint, StatusCode: resp.StatusCode, Code: "invalid_response", Description: "no client_id in the registration response"}
	}
	reg := &ClientRegistration{
		Issuer:       meta.Issuer,
		ClientID:     out.ClientID,
		ClientSecret: out.ClientSecret,
		AuthMethod:   ClientAuthMethod(out.TokenEndpointAuthMethod),
		RedirectURIs: out.RedirectURIs,
	}
	if reg.AuthMethod == "" {
		reg.AuthMethod = ClientAuthMethod(rr.TokenEndpointAuthMethod)
		if reg.AuthMethod == ClientSecretBasic && reg.ClientSecret == "" {
			reg.AuthMethod = NoClientAuth
		}
	}
	if len(reg.RedirectURIs) == 0 {
		reg.RedirectURIs = rr.RedirectURIs
	}
	if exp, err := out.ClientSecretExpiresAt.Float64(); err == nil && reg.ClientSecret != "" && exp > 0 && exp <= maxSecretExpiresAt {
		// 0 means never (RFC 7591 §3.2.1); so does a date past what a
		// store can record. A public client has no secret to expire.
		reg.SecretExpiresAt = time.Unix(int64(exp), 0)
	}
	return reg, nil
}

func isLoopbackRedirect(redirect string) bool {
	u, err := url.Parse(redirect)
	return err == nil && u.Scheme == "http" && isLoopbackHost(u.Hostname())
}
