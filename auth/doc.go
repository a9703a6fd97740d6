// Package auth implements OAuth 2.1 authorization for MCP servers reached
// over HTTP, as the MCP specification's authorization chapter describes it
// (2025-06-18, 2025-11-25 and 2026-07-28, with the 2025-03-26 fallbacks).
//
// One [*Client] value, built by [New], plugs into both layers that need it:
//
//   - the HTTP transport asks it for credentials before every request:
//     [Client.Token] fits transport.TokenSource, [Client.Header] fits
//     StreamableHTTP.HeaderFunc (needed for DPoP, and it checks the origin
//     of each request), and [Client.RoundTripper] wraps an http.RoundTripper
//     (DPoP with server nonces);
//   - the session calls [Client.Authorize] with the *transport.HTTPError of
//     a 401 or 403 response and retries the request when it returns nil.
//
// With the client package, client.WithAuth(client.Auth{Tokens: c}) does
// both: the client finds Header and Authorize on the token source and uses
// them (Header in place of Token, so DPoP-bound tokens work too).
//
// Authorize runs the whole flow: it parses the WWW-Authenticate challenge
// ([ParseChallenges]), fetches the Protected Resource Metadata (RFC 9728)
// and the authorization server metadata (RFC 8414 / OpenID Connect
// discovery, issuer checked), obtains client credentials (pre-registered,
// Client ID Metadata Document, or Dynamic Client Registration, RFC 7591),
// and gets a token with the configured [Method]: authorization code with
// PKCE S256 and RFC 9207 issuer checks, client credentials, device
// authorization (RFC 8628), JWT bearer (RFC 7523) or enterprise-managed
// authorization (RFC 8693 token exchange for an ID-JAG, then JWT bearer).
// Tokens are kept in a [TokenStore] ([MemoryStore], [FileStore]) and
// refreshed before they expire and after a 401.
//
// # Concurrency
//
// A Client is safe for concurrent use. Concurrent refreshes in one process
// share one token request (singleflight); Clients sharing a store that
// implements [RefreshLeaser] ([MemoryStore]; [FileStore] across processes;
// the redisstore module across machines) take the key's refresh lease and
// re-read the store before refreshing, so a rotating refresh token is
// never used twice. A shared store that fails degrades the Client to the
// token it holds, while that token is valid ([*StoreError], logged once);
// so does a refresh before expiry that the token endpoint fails.
// Concurrent Authorize calls that need a new authorization share one flow.
//
// # Cancellation
//
// Every blocking method takes a context that bounds it, including the
// user-facing step ([Interaction]) and device-flow polling. A refresh shared
// by several callers runs with the context of the first one; the others
// stop waiting when their own context ends, and start a refresh of their
// own when the first one's ends it. Once its token request is sent, a
// refresh runs to its end (two minutes at most) even when no caller waits
// for it any more: the authorization server may have rotated the refresh
// token, and its answer is saved for the next refresh. Likewise, callers
// sharing an authorization run it again when the first one's context ends
// it.
//
// # Errors
//
// Failures are typed: [*CredentialsRequiredError] (no way to obtain client
// credentials), [*MetadataError], [*AuthorizationResponseError] (an error
// redirect from the authorization server), [*TokenError] (an error from the
// token endpoint), [*RegistrationError], and the sentinels [ErrIssuerMismatch],
// [ErrStateMismatch], [ErrPKCEUnsupported], [ErrStepUpLimit], [ErrForbidden],
// [ErrNotAuthChallenge], [ErrInsecureEndpoint] and [ErrInteractionRequired];
// a failing token store is a [*StoreError], a refresh abandoned because
// its lease expired matches [ErrLeaseLost].
// Tokens and secrets never appear in error strings or in the String methods
// of [Token] and [ClientRegistration].
package auth
