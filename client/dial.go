package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/transport"
)

// Dial connects to the MCP server at endpoint and negotiates.
//
//   - http:// and https:// use Streamable HTTP (both eras). Unless the
//     protocol is [Modern] or a modern [Pin], the deprecated HTTP+SSE
//     transport (2024-11-05) is the fallback for servers that refuse the
//     initialize POST with 400, 404 or 405.
//   - ws:// and wss:// use WebSocket.
//   - http+unix:// uses Streamable HTTP over a Unix socket, named
//     percent-encoded in place of the host: http+unix://%2Frun%2Fmcp.sock/mcp
//     is the path /mcp served on the socket /run/mcp.sock (the requests
//     name the host localhost). [WithHTTPClient]'s client, if any, must
//     have an *http.Transport (or none): its copy dials the socket.
//
// Any other byte stream (a net.Conn, a named pipe, an SSH channel) is a
// transport.Stream given to [Connect].
//
// [WithHTTPClient], [WithHeaders] and [WithAuth] configure the requests.
// Negotiation verdicts are remembered under the endpoint URL when
// [WithEraCache] is set.
//
// Errors: an [*Error] of kind [KindInvalid] for a URL that cannot be
// parsed or has another scheme, then those of [Connect].
func Dial(ctx context.Context, endpoint string, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	socket, unixURL, unix, err := unixEndpoint(endpoint)
	if err != nil {
		return nil, &Error{Op: "connect", Kind: KindInvalid, Err: err}
	}
	if unix {
		// Streamable HTTP over a Unix socket (unixsocket.go).
		if cfg.httpClient, err = unixHTTPClient(cfg.httpClient, socket); err != nil {
			return nil, &Error{Op: "connect", Kind: KindInvalid, Err: err}
		}
	}
	orig := endpoint
	if unix {
		endpoint = unixURL
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, &Error{Op: "connect", Kind: KindInvalid, Err: err}
	}
	// The key of the result and era caches; without them, none (the
	// URL's string is not worth making).
	var key string
	switch {
	case cfg.cache == nil && cfg.eraCache == nil:
	case unix:
		key = orig // every socket's requests name localhost
	default:
		key = u.String()
	}
	cfg.endpoint = endpoint
	var t, fallback transport.Transport
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		h := &transport.StreamableHTTP{
			URL:                  endpoint,
			HTTPClient:           cfg.httpClient,
			Header:               cfg.headers.Clone(),
			TokenSource:          cfg.auth.Tokens,
			HeaderFunc:           cfg.auth.Header,
			Logger:               cfg.logger,
			CrossOriginRedirects: cfg.crossOrigin,
			// RetryPolicy.ReconnectInitial/Max pace the GET stream too.
			ReconnectBackoff:    cfg.liveness.RelistenInitial,
			MaxReconnectBackoff: cfg.liveness.RelistenMax,
		}
		t = h
		if cfg.protocol == Auto || cfg.protocol == Legacy || isLegacyPin(cfg.protocol) {
			fallback = sseFallback{h}
		}
	case "ws", "wss":
		hc := cfg.httpClient
		if cfg.auth.Tokens != nil || cfg.auth.Header != nil {
			hc = bearerClient(hc, cfg.auth.Tokens, cfg.auth.Header)
		}
		t = &transport.WebSocket{
			URL:                  endpoint,
			Header:               cfg.headers.Clone(),
			HTTPClient:           hc,
			Logger:               cfg.logger,
			CrossOriginRedirects: cfg.crossOrigin,
		}
	default:
		return nil, newError("connect", KindInvalid, "unsupported endpoint scheme %q (want http, https, ws or wss)", u.Scheme)
	}
	c, err := connect(ctx, t, fallback, cfg, key, key)
	if err != nil {
		return nil, opError("connect", err)
	}
	return c, nil
}

// sseFallback is the HTTP+SSE transport to h's endpoint, with h's client,
// headers, credentials and logger. It is made when connected, which a
// server that answers Streamable HTTP never needs: a connect with a
// fallback allocates nothing for it (one pointer fits an interface).
type sseFallback struct{ h *transport.StreamableHTTP }

// Connect connects a new HTTP+SSE transport to the endpoint of f.h.
func (f sseFallback) Connect(ctx context.Context) (transport.Conn, error) {
	h := f.h
	t := &transport.SSE{URL: h.URL, HTTPClient: h.HTTPClient, Header: h.Header.Clone(),
		TokenSource: h.TokenSource, HeaderFunc: h.HeaderFunc, Logger: h.Logger,
		CrossOriginRedirects: h.CrossOriginRedirects}
	return t.Connect(ctx)
}

// isLegacyPin reports whether p pins a legacy-era version; which era a
// version belongs to is negotiation's decision.
func isLegacyPin(p Protocol) bool {
	switch p {
	case Auto, Modern, Legacy:
		return false
	}
	return negotiation.EraOf(string(p)) == negotiation.EraLegacy
}

// resolveAuth applies the optional methods of a.Tokens (see
// [Auth].Tokens): a Header method takes the place of the Header field when
// that is nil, and Token is then not asked; an Authorize method that of
// the Authorize field when that is nil.
func resolveAuth(a Auth) Auth {
	if z, ok := a.Tokens.(interface {
		Authorize(context.Context, *transport.HTTPError) error
	}); ok && a.Authorize == nil {
		a.Authorize = z.Authorize
	}
	if h, ok := a.Tokens.(interface {
		Header(context.Context, *http.Request) error
	}); ok && a.Header == nil {
		a.Header, a.Tokens = h.Header, nil
	}
	return a
}

// bearerClient returns a copy of hc (or of a default client) whose
// requests carry "Authorization: Bearer <token>" from ts (when not nil),
// then whatever header sets.
func bearerClient(hc *http.Client, ts transport.TokenSource, header func(context.Context, *http.Request) error) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	base := c.Transport
	if base == nil {
		base = transport.DefaultPool()
	}
	c.Transport = &bearerTransport{base: base, ts: ts, header: header}
	return &c
}

type bearerTransport struct {
	base   http.RoundTripper
	ts     transport.TokenSource
	header func(context.Context, *http.Request) error
}

func (b *bearerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if !sameOriginAsFirst(req) {
		// A handshake redirected to another origin (followed only with
		// WithCrossOriginRedirects) goes without credentials.
		return b.base.RoundTrip(req)
	}
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	r := req.Clone(req.Context())
	if b.ts != nil {
		tok, err := b.ts.Token(req.Context())
		if err != nil {
			return fail(fmt.Errorf("client: obtaining a token: %w", err))
		}
		if tok != "" {
			r.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	if b.header != nil {
		if err := b.header(req.Context(), r); err != nil {
			return fail(fmt.Errorf("client: setting credentials: %w", err))
		}
	}
	return b.base.RoundTrip(r)
}

// sameOriginAsFirst reports whether req, perhaps a redirect hop (its
// Response names the redirect that made it), goes to the origin of the
// first request of its chain.
func sameOriginAsFirst(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	a, b := req.URL, first.URL
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}
