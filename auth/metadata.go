package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ProtectedResourceMetadata is the RFC 9728 document of a protected
// resource (the fields this package uses).
type ProtectedResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported,omitempty"`
	ResourceName           string   `json:"resource_name,omitempty"`
	// DPoPSigningAlgValuesSupported lists the DPoP proof algorithms the
	// resource accepts (RFC 9449 §5.1).
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// ServerMetadata is authorization server metadata (RFC 8414, or OpenID
// Connect Discovery) — the fields this package uses.
type ServerMetadata struct {
	Issuer                                     string   `json:"issuer"`
	AuthorizationEndpoint                      string   `json:"authorization_endpoint,omitempty"`
	TokenEndpoint                              string   `json:"token_endpoint,omitempty"`
	RegistrationEndpoint                       string   `json:"registration_endpoint,omitempty"`
	DeviceAuthorizationEndpoint                string   `json:"device_authorization_endpoint,omitempty"`
	ScopesSupported                            []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported                     []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported                        []string `json:"grant_types_supported,omitempty"`
	TokenEndpointAuthMethodsSupported          []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	CodeChallengeMethodsSupported              []string `json:"code_challenge_methods_supported,omitempty"`
	AuthorizationResponseIssParameterSupported bool     `json:"authorization_response_iss_parameter_supported,omitempty"`
	ClientIDMetadataDocumentSupported          bool     `json:"client_id_metadata_document_supported,omitempty"`
	DPoPSigningAlgValuesSupported              []string `json:"dpop_signing_alg_values_supported,omitempty"`

	// legacy is set for metadata found by the 2025-03-26 fallback (no
	// Protected Resource Metadata): the document at the server's origin,
	// or the default endpoints there when it has none.
	legacy bool
}

// maxMetadataBody bounds a metadata or registration response body.
const maxMetadataBody = 1 << 20

// errNotFound marks a metadata URL that answered 4xx: try the next one.
var errNotFound = errors.New("auth: metadata document not found")

// getJSON fetches url and decodes a JSON object into v. A 4xx status
// returns an error wrapping errNotFound.
func getJSON(ctx context.Context, hc *http.Client, u string, v any) error {
	if err := checkSecure(u); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBody))
		return fmt.Errorf("%w: %s: status %d", errNotFound, u, resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("auth: %s: status %d", u, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxMetadataBody {
		return fmt.Errorf("auth: %s: document larger than %d bytes", u, maxMetadataBody)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("auth: %s: invalid JSON: %v", u, err)
	}
	return nil
}

// prmURLs returns the Protected Resource Metadata URLs to try for server
// when the challenge named none: path-aware first, then the root.
func prmURLs(server string) []string {
	u, err := url.Parse(server)
	if err != nil {
		return nil
	}
	base := u.Scheme + "://" + u.Host + "/.well-known/oauth-protected-resource"
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return []string{base}
	}
	return []string{base + p, base}
}

// fetchPRM fetches the Protected Resource Metadata of server. It tries
// hint (the challenge's resource_metadata) first, then the well-known
// URLs. It returns (nil, nil) when every URL answered 4xx (a 2025-03-26
// server, whose authorization server is at its origin).
func fetchPRM(ctx context.Context, hc *http.Client, server, hint string) (*ProtectedResourceMetadata, error) {
	urls := prmURLs(server)
	if hint != "" && !slices.Contains(urls, hint) {
		urls = append([]string{hint}, urls...)
	}
	for _, u := range urls {
		var m ProtectedResourceMetadata
		err := getJSON(ctx, hc, u, &m)
		if errors.Is(err, errNotFound) {
			continue
		}
		if err == nil {
			err = validatePRM(&m, server)
		}
		if err != nil {
			return nil, &MetadataError{Kind: "protected resource", URLs: urls, Err: err}
		}
		return &m, nil
	}
	return nil, nil
}

func validatePRM(m *ProtectedResourceMetadata, server string) error {
	if m.Resource != "" && !resourceCovers(m.Resource, server) {
		return fmt.Errorf("auth: metadata is for resource %q, not %q", m.Resource, server)
	}
	if len(m.AuthorizationServers) == 0 {
		return errors.New("auth: metadata lists no authorization_servers")
	}
	return nil
}

// asMetadataURLs returns the metadata URLs for issuer in the order of the
// MCP specification (RFC 8414 path insertion, OIDC path insertion, OIDC
// path appending).
func asMetadataURLs(issuer string) ([]string, error) {
	u, err := url.Parse(issuer)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("auth: invalid issuer %q", issuer)
	}
	root := u.Scheme + "://" + u.Host
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return []string{
			root + "/.well-known/oauth-authorization-server",
			root + "/.well-known/openid-configuration",
		}, nil
	}
	return []string{
		root + "/.well-known/oauth-authorization-server" + p,
		root + "/.well-known/openid-configuration" + p,
		root + p + "/.well-known/openid-configuration",
	}, nil
}

// fetchServerMetadata fetches and checks the metadata of issuer: a
// document whose issuer differs from issuer is discarded (the next URL is
// tried), as RFC 8414 §3.3 requires of a URL built from an issuer.
//
// With legacy set (no Protected Resource Metadata: a 2025-03-26 server)
// issuer is not an issuer identifier but the authorization base URL (the
// MCP server's URL without its path), from which the 2025-03-26 revision
// builds the metadata URL. The document found there names the issuer, so
// its issuer is taken as is (an empty one means the base URL) and becomes
// the issuer recorded for the authorization response's iss check; a
// missing document yields the default endpoints under the base URL.
func fetchServerMetadata(ctx context.Context, hc *http.Client, issuer string, legacy bool) (*ServerMetadata, error) {
	if err := checkSecure(issuer); err != nil {
		return nil, &MetadataError{Kind: "authorization server", URLs: []string{issuer}, Err: err}
	}
	urls, err := asMetadataURLs(issuer)
	if err != nil {
		return nil, &MetadataError{Kind: "authorization server", Err: err}
	}
	var last, mismatch error
	for _, u := range urls {
		var m ServerMetadata
		err := getJSON(ctx, hc, u, &m)
		if errors.Is(err, errNotFound) {
			last = err
			continue
		}
		if err != nil {
			return nil, &MetadataError{Kind: "authorization server", URLs: urls, Err: err}
		}
		switch {
		case legacy:
			if m.Issuer == "" {
				m.Issuer = issuer
			} else if err := checkSecure(m.Issuer); err != nil {
				return nil, &MetadataError{Kind: "authorization server", URLs: urls, Err: err}
			}
		case m.Issuer != issuer:
			mismatch = fmt.Errorf("%w: document at %s names issuer %q, expected %q", ErrIssuerMismatch, u, m.Issuer, issuer)
			last = mismatch
			continue
		}
		if err := m.checkEndpoints(); err != nil {
			return nil, &MetadataError{Kind: "authorization server", URLs: urls, Err: err}
		}
		m.legacy = legacy
		return &m, nil
	}
	if mismatch != nil {
		last = mismatch
	} else if legacy {
		return &ServerMetadata{
			Issuer:                        issuer,
			AuthorizationEndpoint:         issuer + "/authorize",
			TokenEndpoint:                 issuer + "/token",
			RegistrationEndpoint:          issuer + "/register",
			CodeChallengeMethodsSupported: []string{"S256"},
			legacy:                        true,
		}, nil
	}
	return nil, &MetadataError{Kind: "authorization server", URLs: urls, Err: last}
}

func (m *ServerMetadata) checkEndpoints() error {
	for _, e := range []string{m.AuthorizationEndpoint, m.TokenEndpoint, m.RegistrationEndpoint, m.DeviceAuthorizationEndpoint} {
		if e == "" {
			continue
		}
		if err := checkSecure(e); err != nil {
			return err
		}
	}
	return nil
}

// supportsS256 reports whether PKCE S256 is advertised.
func (m *ServerMetadata) supportsS256() bool {
	return slices.Contains(m.CodeChallengeMethodsSupported, "S256")
}

// authMethods returns token_endpoint_auth_methods_supported with the
// RFC 8414 default.
func (m *ServerMetadata) authMethods() []string {
	if len(m.TokenEndpointAuthMethodsSupported) == 0 {
		return []string{string(ClientSecretBasic)}
	}
	return m.TokenEndpointAuthMethodsSupported
}
