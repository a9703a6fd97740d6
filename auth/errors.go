package auth

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrIssuerMismatch reports an authorization server that is not the
	// one the flow started with: a metadata document whose issuer differs
	// from the issuer its URL was built from, or an authorization response
	// whose iss parameter differs from the recorded issuer (a mix-up
	// attack, RFC 9207), or one without iss from a server that promises
	// to send it.
	ErrIssuerMismatch = errors.New("auth: authorization server issuer mismatch")
	// ErrStateMismatch reports an authorization response whose state
	// parameter is not the one sent.
	ErrStateMismatch = errors.New("auth: authorization response state mismatch")
	// ErrPKCEUnsupported reports authorization server metadata without
	// S256 in code_challenge_methods_supported; the flow does not proceed.
	ErrPKCEUnsupported = errors.New("auth: authorization server does not support PKCE S256")
	// ErrStepUpLimit reports that a 403 insufficient_scope challenge was
	// answered too many times for the same resource and scope set.
	ErrStepUpLimit = errors.New("auth: too many scope step-up attempts")
	// ErrForbidden reports a 403 that authorization cannot fix (no
	// insufficient_scope challenge, for example an invalid Origin).
	ErrForbidden = errors.New("auth: forbidden")
	// ErrNotAuthChallenge reports an error passed to Authorize that is not
	// a 401 or 403 HTTP error.
	ErrNotAuthChallenge = errors.New("auth: not an authorization challenge")
	// ErrInsecureEndpoint reports an authorization server or metadata URL
	// that is neither https nor on a loopback host.
	ErrInsecureEndpoint = errors.New("auth: endpoint must use https")
	// ErrInteractionRequired reports that the flow needs the user (or a
	// redirect URL) but the Config has no Interaction.
	ErrInteractionRequired = errors.New("auth: user interaction required but none configured")
	// ErrRedirectURIRejected matches a [*RegistrationError] whose code is
	// invalid_redirect_uri: the authorization server refused the redirect
	// URI offered in Dynamic Client Registration.
	ErrRedirectURIRejected = errors.New("auth: redirect URI rejected by the authorization server")
	// ErrRefreshTokenRejected reports a refresh token the authorization
	// server no longer accepts (invalid_grant): the stored token is
	// discarded and the next Authorize runs a new authorization.
	ErrRefreshTokenRejected = errors.New("auth: refresh token rejected")
	// ErrNoRefreshToken is returned by [Client.Refresh] when there is no
	// refresh token to use.
	ErrNoRefreshToken = errors.New("auth: no refresh token")
	// ErrWrongOrigin is returned by [Client.TokenFor] for a request URL
	// whose origin is not the protected resource's.
	ErrWrongOrigin = errors.New("auth: request URL is not on the protected resource's origin")

	// ErrCorruptValue is what a [TokenStore] reports (matching it) for a
	// stored token or registration that does not open or decode: one
	// sealed under another key by another replica, or garbled. The
	// [Client] takes such a value as absent, so that the next
	// authorization replaces it, and logs it.
	ErrCorruptValue = errors.New("auth: stored value does not open or decode")
)

// CredentialsRequiredError reports that no client credentials could be
// obtained for an authorization server: none were configured, the server
// does not accept a Client ID Metadata Document from us, and it offers no
// Dynamic Client Registration. Configure [Config.ClientID] (and
// ClientSecret or PrivateKey) registered with Issuer.
type CredentialsRequiredError struct {
	// Issuer identifies the authorization server.
	Issuer string
	// Reason says why registration was not possible.
	Reason string
}

func (e *CredentialsRequiredError) Error() string {
	return fmt.Sprintf("auth: client credentials required for authorization server %s: %s", e.Issuer, e.Reason)
}

// MetadataError reports that discovery failed: Protected Resource Metadata
// or authorization server metadata could not be fetched, parsed or
// accepted. Err, when set, says why (it may match [ErrIssuerMismatch],
// [ErrInsecureEndpoint]).
type MetadataError struct {
	// Kind is "protected resource" or "authorization server".
	Kind string
	// URLs are the documents tried, in order.
	URLs []string
	// Err is the last failure.
	Err error
}

func (e *MetadataError) Error() string {
	return fmt.Sprintf("auth: %s metadata unavailable (tried %v): %v", e.Kind, e.URLs, e.Err)
}

// Unwrap returns Err.
func (e *MetadataError) Unwrap() error { return e.Err }

// AuthorizationResponseError is an error redirect from the authorization
// endpoint (error, error_description, error_uri). It is only returned after
// state and iss were validated, so its fields come from the expected server.
type AuthorizationResponseError struct {
	Code        string
	Description string
	URI         string
}

func (e *AuthorizationResponseError) Error() string {
	if e.Description != "" {
		return fmt.Sprintf("auth: authorization denied: %s: %s", e.Code, e.Description)
	}
	return "auth: authorization denied: " + e.Code
}

// TokenError is an error response of a token, device authorization or
// registration endpoint (RFC 6749 §5.2). Code is the OAuth error code, for
// example invalid_grant.
type TokenError struct {
	// Endpoint is the URL that answered.
	Endpoint string
	// StatusCode is the HTTP status (0 when unknown).
	StatusCode int
	// Code and Description are the error and error_description fields.
	Code        string
	Description string
	// Err is the underlying failure when there was no error response
	// (network error, context end, invalid response).
	Err error
}

func (e *TokenError) Error() string {
	s := fmt.Sprintf("auth: token endpoint %s: status %d", e.Endpoint, e.StatusCode)
	if e.Code != "" {
		s += ": " + e.Code
	}
	if e.Description != "" {
		s += ": " + e.Description
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns Err.
func (e *TokenError) Unwrap() error { return e.Err }

// RegistrationError is an error response of Dynamic Client Registration
// (RFC 7591 §3.2.2). It matches [ErrRedirectURIRejected] when Code is
// invalid_redirect_uri.
type RegistrationError struct {
	Endpoint    string
	StatusCode  int
	Code        string
	Description string
}

func (e *RegistrationError) Error() string {
	return fmt.Sprintf("auth: client registration at %s: status %d: %s %s", e.Endpoint, e.StatusCode, e.Code, e.Description)
}

// Is reports whether target is [ErrRedirectURIRejected] and the code says so.
func (e *RegistrationError) Is(target error) bool {
	return target == ErrRedirectURIRejected && e.Code == "invalid_redirect_uri"
}
