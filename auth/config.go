package auth

import (
	"context"
	"crypto"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Method selects how a [Client] obtains tokens.
type Method int

const (
	// AuthorizationCode is the interactive authorization code grant with
	// PKCE S256 (the default): the user approves in a browser through
	// [Config.Interaction].
	AuthorizationCode Method = iota
	// ClientCredentials is the client_credentials grant for services,
	// with a client secret or a private_key_jwt assertion.
	ClientCredentials
	// DeviceCode is the device authorization grant (RFC 8628) for
	// machines without a browser: the user enters a code elsewhere. The
	// client polls at the server's interval, slower after slow_down and,
	// twice as slow each time, after a poll whose connection failed or
	// that was answered 429 or 5xx, until the code expires.
	DeviceCode
	// JWTBearer is the JWT bearer grant (RFC 7523 §2.1) with an assertion
	// from [Config.Assertion], for example a workload identity token.
	JWTBearer
	// TokenExchange is enterprise-managed authorization: an identity
	// token is exchanged at the enterprise identity provider for an
	// identity assertion grant (ID-JAG, RFC 8693 token exchange), which is
	// then presented to the MCP authorization server with the JWT bearer
	// grant. See [TokenExchangeConfig].
	TokenExchange
)

// String returns the method's name.
func (m Method) String() string {
	switch m {
	case AuthorizationCode:
		return "authorization_code"
	case ClientCredentials:
		return "client_credentials"
	case DeviceCode:
		return "device_code"
	case JWTBearer:
		return "jwt_bearer"
	case TokenExchange:
		return "token_exchange"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// interactive reports whether the method involves the user.
func (m Method) interactive() bool { return m == AuthorizationCode || m == DeviceCode }

// Interaction is the user-facing step of the authorization code flow: it
// shows authURL to the user (opens a browser) and returns the redirect the
// authorization server sent back, with its query (code, state, iss or
// error). It blocks until then or until ctx ends; it is called by one
// goroutine at a time.
//
// If the Interaction also implements [RedirectProvider], its redirect URL
// is used when [Config.RedirectURL] is empty. [*Loopback] is a ready
// implementation.
type Interaction interface {
	Authorize(ctx context.Context, authURL string) (redirect *url.URL, err error)
}

// InteractionFunc adapts a function to [Interaction].
type InteractionFunc func(ctx context.Context, authURL string) (*url.URL, error)

// Authorize calls f.
func (f InteractionFunc) Authorize(ctx context.Context, authURL string) (*url.URL, error) {
	return f(ctx, authURL)
}

// RedirectProvider is implemented by an [Interaction] that knows its
// redirect URL (for example a loopback listener on a port it chose).
// RedirectURL may block briefly (binding a socket) and is idempotent.
type RedirectProvider interface {
	RedirectURL(ctx context.Context) (string, error)
}

var _ Interaction = InteractionFunc(nil)

// TokenExchangeConfig configures [TokenExchange] (enterprise-managed
// authorization with an identity assertion grant).
type TokenExchangeConfig struct {
	// TokenEndpoint is the token endpoint of the enterprise identity
	// provider that issues ID-JAGs.
	TokenEndpoint string
	// ClientID and ClientSecret authenticate this client at the identity
	// provider (client_secret_basic when ClientSecret is set, else only
	// client_id).
	ClientID     string
	ClientSecret string
	// SubjectToken returns the token identifying the user at the identity
	// provider (typically an OpenID Connect ID token). Required.
	SubjectToken func(ctx context.Context) (string, error)
	// SubjectTokenType is the subject token's type; "" means
	// urn:ietf:params:oauth:token-type:id_token.
	SubjectTokenType string
}

// Config configures a [Client]. It is copied by [New].
type Config struct {
	// ServerURL is the MCP endpoint (the protected resource). Required.
	ServerURL string
	// HTTPClient sends discovery, registration and token requests (never
	// MCP requests). nil means a client with a 30 s timeout over
	// http.DefaultTransport. It is copied, and its CheckRedirect wrapped:
	// registration and token requests, which carry credentials, follow
	// redirects within their origin only (one to another origin fails with
	// a [*transport.RedirectError] naming both); metadata discovery follows
	// redirects to other origins but never from https to http.
	HTTPClient *http.Client
	// Method is how tokens are obtained; the zero value is
	// [AuthorizationCode].
	Method Method

	// ClientID and ClientSecret are pre-registered credentials. When
	// ClientID is set it is used before any other registration option.
	ClientID     string
	ClientSecret string
	// ClientIssuer, when set, limits ClientID to the authorization server
	// with this issuer; with another server the Client registers anew.
	// Empty means ClientID is used with whichever server the resource
	// names.
	ClientIssuer string
	// AuthMethod forces the token endpoint authentication method of
	// ClientID. Empty means: [PrivateKeyJWT] when PrivateKey is set, else
	// client_secret_basic (or _post, as the server supports) when
	// ClientSecret is set, else none.
	AuthMethod ClientAuthMethod
	// PrivateKey signs private_key_jwt client assertions (RSA, ECDSA or
	// Ed25519), with KeyID as the kid header when set.
	PrivateKey crypto.Signer
	KeyID      string
	// ClientMetadataURL is the HTTPS URL of this client's Client ID
	// Metadata Document; it becomes the client id with servers that
	// advertise client_id_metadata_document_supported. Empty disables.
	ClientMetadataURL string
	// ClientName is the client_name sent in Dynamic Client Registration;
	// empty means "Conduit MCP client".
	ClientName string

	// RedirectURL is the redirect URI of the authorization code flow.
	// Empty means the Interaction's (see [RedirectProvider]).
	RedirectURL string
	// Interaction performs the user-facing step of the authorization code
	// flow. nil makes that flow fail with [ErrInteractionRequired].
	Interaction Interaction
	// DevicePrompter shows the device-flow code to the user. nil means
	// the Interaction if it implements [DevicePrompter], else a message
	// on os.Stderr.
	DevicePrompter DevicePrompter

	// Scopes, when not nil, are requested instead of the automatic choice
	// (the challenge's scope, else the resource's scopes_supported, else
	// none). Step-up always requests the union of previous and challenged
	// scopes.
	Scopes []string
	// DisableOfflineAccess stops the Client from adding offline_access to
	// interactive requests when the server lists it in scopes_supported.
	DisableOfflineAccess bool

	// Store keeps tokens and registrations. nil means a new [MemoryStore].
	Store TokenStore

	// Assertion returns the JWT presented with the [JWTBearer] method;
	// audience is the authorization server's issuer.
	Assertion func(ctx context.Context, audience string) (string, error)
	// TokenExchange configures the [TokenExchange] method.
	TokenExchange *TokenExchangeConfig

	// DPoPKey, when set, makes token requests ask for DPoP-bound tokens
	// (RFC 9449) with proofs signed by this key; requests to the MCP
	// server then need [Client.Header] or [Client.RoundTripper]. Clients
	// that share tokens through a store (the replicas of a fleet) must
	// share the key: a token is bound to the key whose proofs obtained it,
	// and the proofs of another are refused.
	DPoPKey crypto.Signer

	// RefreshSkew is how long before expiry a token is refreshed. 0 means
	// [DefaultRefreshSkew]; negative means only at expiry.
	RefreshSkew time.Duration
	// MaxStepUps bounds step-up authorizations per resource and scope set.
	// 0 means [DefaultMaxStepUps]; negative means none.
	MaxStepUps int
	// Logger receives diagnostics (never tokens). nil discards them.
	Logger *slog.Logger
}

// Defaults.
const (
	// DefaultRefreshSkew is the default of [Config.RefreshSkew].
	DefaultRefreshSkew = time.Minute
	// DefaultMaxStepUps is the default of [Config.MaxStepUps].
	DefaultMaxStepUps = 2
	// defaultHTTPTimeout bounds one discovery, registration or token
	// request of the default HTTP client.
	defaultHTTPTimeout = 30 * time.Second
)
