package main

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/conduitmcp/conduit/auth"
	"github.com/conduitmcp/conduit/client"
)

// The suite's fixed values for the authorization code flow: its mock
// authorization servers approve at once and redirect to this URI, and
// servers advertising Client ID Metadata Document support accept this
// client id.
const (
	redirectURL       = "http://localhost:3000/callback"
	clientMetadataURL = "https://conformance-test.local/client-metadata.json"
)

// authContext is the part of MCP_CONFORMANCE_CONTEXT the auth/* scenarios
// fill in: pre-registered credentials, a private key for private_key_jwt,
// a workload identity JWT, or an enterprise identity provider.
type authContext struct {
	Name             string `json:"name"`
	ClientID         string `json:"client_id"`
	ClientSecret     string `json:"client_secret"`
	Issuer           string `json:"issuer"`
	PrivateKeyPEM    string `json:"private_key_pem"`
	SigningAlgorithm string `json:"signing_algorithm"`
	ValidJWT         string `json:"valid_jwt"`
	IDPClientID      string `json:"idp_client_id"`
	IDPIDToken       string `json:"idp_id_token"`
	IDPTokenEndpoint string `json:"idp_token_endpoint"`
}

// authOptions returns the client options of the auth/* scenarios: an
// auth.Client plugged in with client.WithAuth(client.Auth{Tokens: a}).
// Its configuration follows the scenario's context:
//
//   - idp_token_endpoint: enterprise-managed authorization (token exchange
//     for an ID-JAG at the identity provider, then the JWT bearer grant);
//   - valid_jwt: the JWT bearer grant with that workload identity token;
//   - private_key_pem: client_credentials with private_key_jwt;
//   - auth/client-credentials-*: client_credentials with the secret;
//   - otherwise the authorization code flow (with the context's
//     pre-registered credentials, if any), whose user step follows the
//     authorization URL to its redirect without a browser; the auth/dpop*
//     scenarios add a DPoP key and send MCP requests through the auth
//     client's RoundTripper, which answers use_dpop_nonce challenges.
func (e scenarioEnv) authOptions() ([]client.Option, error) {
	if !strings.HasPrefix(e.Scenario, "auth/") {
		return nil, nil
	}
	var ac authContext
	if len(e.Context) > 0 {
		raw, err := json.Marshal(e.Context)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(raw, &ac); err != nil {
			return nil, fmt.Errorf("MCP_CONFORMANCE_CONTEXT: %w", err)
		}
	}
	cfg := auth.Config{
		ServerURL:    e.URL,
		ClientID:     ac.ClientID,
		ClientSecret: ac.ClientSecret,
		ClientIssuer: ac.Issuer,
		ClientName:   "conduit-conformance-client",
	}
	var opts []client.Option
	switch {
	case ac.IDPTokenEndpoint != "":
		token := ac.IDPIDToken
		cfg.Method = auth.TokenExchange
		cfg.TokenExchange = &auth.TokenExchangeConfig{
			TokenEndpoint: ac.IDPTokenEndpoint,
			ClientID:      ac.IDPClientID,
			SubjectToken:  func(context.Context) (string, error) { return token, nil },
		}
	case ac.ValidJWT != "":
		assertion := ac.ValidJWT
		cfg.Method = auth.JWTBearer
		cfg.Assertion = func(context.Context, string) (string, error) { return assertion, nil }
	case ac.PrivateKeyPEM != "":
		key, err := parsePrivateKey(ac.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("context private_key_pem: %w", err)
		}
		cfg.Method = auth.ClientCredentials
		cfg.PrivateKey = key
		cfg.AuthMethod = auth.PrivateKeyJWT
	case strings.HasPrefix(e.Scenario, "auth/client-credentials-"):
		cfg.Method = auth.ClientCredentials
	default:
		cfg.Method = auth.AuthorizationCode
		cfg.RedirectURL = redirectURL
		cfg.ClientMetadataURL = clientMetadataURL
		cfg.Interaction = auth.InteractionFunc(followRedirect)
		if strings.HasPrefix(e.Scenario, "auth/dpop") {
			key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				return nil, err
			}
			cfg.DPoPKey = key
		}
	}
	a, err := auth.New(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.DPoPKey != nil {
		// The RoundTripper retries a request answered with a DPoP nonce
		// challenge (the Header hook cannot see responses).
		opts = append(opts, client.WithHTTPClient(&http.Client{Transport: a.RoundTripper(nil)}))
	}
	return append(opts, client.WithAuth(client.Auth{Tokens: a})), nil
}

// parsePrivateKey reads a PKCS #8 (or SEC 1 EC) PEM private key.
func parsePrivateKey(p string) (crypto.Signer, error) {
	block, _ := pem.Decode([]byte(p))
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		s, ok := k.(crypto.Signer)
		if !ok {
			return nil, fmt.Errorf("unsupported key type %T", k)
		}
		return s, nil
	}
	return x509.ParseECPrivateKey(block.Bytes)
}

// followRedirect is the headless user step: the suite's authorization
// endpoints answer with a redirect carrying the code (or an error), which
// is returned without being followed.
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
		return nil, fmt.Errorf("authorization endpoint answered %s without a redirect", resp.Status)
	}
	return resp.Request.URL.Parse(loc)
}
