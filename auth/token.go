package auth

import (
	"fmt"
	"strings"
	"time"
)

// Token is an access token with what is needed to use and renew it. Its
// String and GoString methods redact the secrets, so printing a Token
// (with %v, %+v, %#v or %s) never shows them.
type Token struct {
	// AccessToken is sent in the Authorization header.
	AccessToken string `json:"access_token"`
	// TokenType is "Bearer" or "DPoP" (as returned by the server; empty
	// means Bearer).
	TokenType string `json:"token_type,omitempty"`
	// RefreshToken renews the access token; empty if none was issued.
	RefreshToken string `json:"refresh_token,omitempty"`
	// Expiry is when AccessToken expires; zero means unknown (never
	// refreshed early).
	Expiry time.Time `json:"expiry,omitzero"`
	// IssuedAt is when the token was obtained; with Expiry it bounds the
	// refresh skew to half the token's lifetime.
	IssuedAt time.Time `json:"issued_at,omitzero"`
	// Scopes are the scopes granted (as reported by the token response, or
	// as requested when it did not say).
	Scopes []string `json:"scopes,omitempty"`
	// Issuer is the authorization server that issued the token; a token is
	// only used while the server's metadata still points to this issuer.
	Issuer string `json:"issuer"`
	// Resource is the resource (RFC 8707) the token was requested for.
	Resource string `json:"resource"`
	// LegacyDiscovery is set when the issuer's metadata was found by the
	// 2025-03-26 fallback (the server published no Protected Resource
	// Metadata; the metadata is at the server's origin): a refresh looks
	// for it there again and uses it only if it still names Issuer.
	LegacyDiscovery bool `json:"legacy_discovery,omitempty"`
}

// String returns a description of t without its secrets.
func (t Token) String() string {
	return fmt.Sprintf("auth.Token{Type: %q, AccessToken: %s, RefreshToken: %s, Expiry: %s, Scopes: %q, Issuer: %q, Resource: %q}",
		t.TokenType, redact(t.AccessToken), redact(t.RefreshToken), t.Expiry.Format(time.RFC3339), t.Scopes, t.Issuer, t.Resource)
}

// GoString is String, so that %#v redacts too.
func (t Token) GoString() string { return t.String() }

// dpop reports whether the token is DPoP-bound.
func (t *Token) dpop() bool { return strings.EqualFold(t.TokenType, "DPoP") }

// fresh reports whether t can still be used for skew from now.
func (t *Token) fresh(now time.Time, skew time.Duration) bool {
	if t == nil || t.AccessToken == "" {
		return false
	}
	if t.Expiry.IsZero() {
		return true
	}
	if !t.IssuedAt.IsZero() {
		// A token living shorter than twice the skew would otherwise be
		// refreshed on every use.
		skew = min(skew, t.Expiry.Sub(t.IssuedAt)/2)
	}
	return now.Add(skew).Before(t.Expiry)
}

func redact(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}

// ClientAuthMethod is a token endpoint client authentication method
// (RFC 7591 token_endpoint_auth_method).
type ClientAuthMethod string

// Token endpoint authentication methods.
const (
	// ClientSecretBasic sends client_id and client_secret with HTTP Basic
	// authentication.
	ClientSecretBasic ClientAuthMethod = "client_secret_basic"
	// ClientSecretPost sends them as form parameters.
	ClientSecretPost ClientAuthMethod = "client_secret_post"
	// NoClientAuth sends only client_id (a public client).
	NoClientAuth ClientAuthMethod = "none"
	// PrivateKeyJWT sends a client assertion signed with
	// [Config.PrivateKey] (RFC 7523 §2.2).
	PrivateKeyJWT ClientAuthMethod = "private_key_jwt"
)

// ClientRegistration is the client identity used with one authorization
// server. Its String and GoString methods redact the secret.
type ClientRegistration struct {
	// Issuer is the authorization server the registration belongs to; it
	// is never used with another.
	Issuer string `json:"issuer"`
	// ClientID identifies the client (for a Client ID Metadata Document,
	// its HTTPS URL).
	ClientID string `json:"client_id"`
	// ClientSecret is the secret of a confidential client; empty for
	// public clients.
	ClientSecret string `json:"client_secret,omitempty"`
	// SecretExpiresAt is when ClientSecret expires; zero means never.
	SecretExpiresAt time.Time `json:"client_secret_expires_at,omitzero"`
	// AuthMethod is the token endpoint authentication method.
	AuthMethod ClientAuthMethod `json:"token_endpoint_auth_method,omitempty"`
	// RedirectURIs are the registered redirect URIs.
	RedirectURIs []string `json:"redirect_uris,omitempty"`
}

// String returns a description of r without its secret.
func (r ClientRegistration) String() string {
	return fmt.Sprintf("auth.ClientRegistration{Issuer: %q, ClientID: %q, ClientSecret: %s, AuthMethod: %q, RedirectURIs: %q}",
		r.Issuer, r.ClientID, redact(r.ClientSecret), r.AuthMethod, r.RedirectURIs)
}

// GoString is String, so that %#v redacts too.
func (r ClientRegistration) GoString() string { return r.String() }
