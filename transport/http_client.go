package transport

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TokenSource supplies the bearer token of an HTTP transport. Token is
// called before every request; it may block (a refresh) and is bounded by
// ctx; it may be called concurrently, so an implementation that refreshes
// should deduplicate concurrent refreshes itself. An empty token sends no
// Authorization header.
type TokenSource interface {
	// Token returns the current access token, refreshing it if needed.
	Token(ctx context.Context) (string, error)
}

// TokenSourceFunc adapts a function to [TokenSource].
type TokenSourceFunc func(ctx context.Context) (string, error)

// Token calls f.
func (f TokenSourceFunc) Token(ctx context.Context) (string, error) { return f(ctx) }

var _ TokenSource = TokenSourceFunc(nil)

// Timeouts of the HTTP transports. None of them bounds a whole request: a
// tool call or an event stream may last as long as its context allows.
const (
	// DefaultDialTimeout bounds establishing a TCP connection: the value
	// of http.DefaultTransport, and so of [DefaultPool], which the
	// transports share when no HTTPClient is given.
	DefaultDialTimeout = 30 * time.Second
	// DefaultTLSHandshakeTimeout bounds the TLS handshake: the value of
	// http.DefaultTransport.
	DefaultTLSHandshakeTimeout = 10 * time.Second
	// DefaultResponseHeaderTimeout is the default of
	// [StreamableHTTP.ResponseHeaderTimeout].
	DefaultResponseHeaderTimeout = 30 * time.Second
	// DefaultMaxMessageSize is the default limit of one message (a JSON
	// body or one event of an event stream).
	DefaultMaxMessageSize = 16 << 20
	// DeleteTimeout bounds the DELETE that ends a legacy session on Close.
	DeleteTimeout = 5 * time.Second
)

// Media types.
const (
	mediaJSON        = "application/json"
	mediaEventStream = "text/event-stream"
	acceptPOST       = mediaJSON + ", " + mediaEventStream
)

// Reasons a request context is cancelled (context.Cause).
var (
	errClosing = errors.New("transport: connection closing")
	// errStreamCanceled matches context.Canceled: the session cancelled
	// the request itself; it is not a network failure worth a retry.
	errStreamCanceled = fmt.Errorf("transport: response stream canceled by CancelStream: %w", context.Canceled)
)

// headerTimeoutError is the cause of a request cancelled by a
// response-header timeout. It reports Timeout() so that
// [NetworkError.Timeout] sees it.
type headerTimeoutError struct{}

func (headerTimeoutError) Error() string { return "timeout awaiting response headers" }
func (headerTimeoutError) Timeout() bool { return true }

// newHTTPClient returns the client of one connection: a copy of user (or
// of a zero client) whose CheckRedirect keeps requests at their origin
// (see redirectPolicy; static names the headers the transport adds).
// Without user, the client's Transport is [DefaultPool]: every connection
// without a client of its own shares it, and its idle connections belong
// to the pool, not to the connection. A user's nil Transport stays nil
// (http.DefaultTransport), as the user's client would have it. Neither copy has an overall Timeout
// unless user has one.
func newHTTPClient(user *http.Client, crossOrigin bool, static http.Header, log *slog.Logger) *http.Client {
	if user == nil && !crossOrigin {
		return sameOriginClient
	}
	c := http.Client{Transport: pool}
	if user != nil {
		if user.Timeout > 0 {
			log.Warn("transport: http.Client.Timeout bounds whole requests and will end long tool calls and event streams; use contexts instead", "timeout", user.Timeout)
		}
		c = *user
	}
	c.CheckRedirect = redirectPolicy(c.CheckRedirect, crossOrigin, static)
	return &c
}

func parseEndpoint(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("transport: invalid URL %q: %v", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("transport: URL %q is not an absolute http or https URL", raw)
	}
	return u, nil
}

// commonHeaders applies what every request of an HTTP transport carries:
// the static headers, then the bearer token.
func commonHeaders(ctx context.Context, req *http.Request, static http.Header, ts TokenSource) error {
	for k, vs := range static {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	if ts != nil {
		tok, err := ts.Token(ctx)
		if err != nil {
			return fmt.Errorf("transport: getting token: %w", err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
	}
	return nil
}

// mediaType returns the media type of a Content-Type value, lower case,
// without parameters. It is what mime.ParseMediaType returns, whether the
// parameters parse or not (the media type is the lowered, trimmed text
// before the first ';' either way), without the map of parameters that
// ParseMediaType allocates for every response.
// Canonical header keys, for reqHeaders.set (Header.Set canonicalizes
// the key of every call, which allocates for MCP-Protocol-Version).
var (
	hdrContentType     = "Content-Type"
	hdrAccept          = "Accept"
	hdrProtocolVersion = http.CanonicalHeaderKey(protocol.HeaderProtocolVersion)
	hdrSessionID       = http.CanonicalHeaderKey(protocol.HeaderSessionID)
	hdrMethod          = http.CanonicalHeaderKey(protocol.HeaderMethod)
	hdrName            = http.CanonicalHeaderKey(protocol.HeaderName)
	hdrLastEventID     = http.CanonicalHeaderKey(protocol.HeaderLastEventID)
)

// reqHeaders sets the one-value headers of a request with values taken
// from one array, so that setting n headers allocates once instead of n
// times. Each value slice has capacity 1: a later Add (a HeaderFunc, say)
// copies it instead of writing into the next one.
type reqHeaders struct {
	h    http.Header
	vals []string
}

// headersOf returns the reqHeaders of req, with room for n values.
func headersOf(req *http.Request, n int) reqHeaders {
	return reqHeaders{h: req.Header, vals: make([]string, 0, n)}
}

// set sets the header of canonical key to v, as Header.Set does.
func (r *reqHeaders) set(key, v string) {
	r.vals = append(r.vals, v)
	n := len(r.vals)
	r.h[key] = r.vals[n-1 : n : n]
}

func mediaType(ct string) string {
	base, _, _ := strings.Cut(ct, ";")
	return strings.ToLower(strings.TrimSpace(base))
}

// newHTTPError builds the error of a response that was not a success. It
// reads at most MaxErrorBody bytes of the body and closes it.
func newHTTPError(method, endpoint string, resp *http.Response) *HTTPError {
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBody))
	ct := resp.Header.Get("Content-Type")
	return &HTTPError{
		Method:          method,
		URL:             endpoint,
		StatusCode:      resp.StatusCode,
		ContentType:     ct,
		Body:            body,
		WWWAuthenticate: strings.Join(resp.Header.Values("WWW-Authenticate"), ", "),
		RetryAfter:      ParseRetryAfter(resp.Header.Get("Retry-After"), time.Now()),
		Response:        responseInBody(ct, body),
	}
}

// responseInBody finds a JSON-RPC response in an error body: the body
// itself as JSON, or the first response event of an event stream.
func responseInBody(ct string, body []byte) *jsonrpc.Response {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if mediaType(ct) == mediaEventStream {
		var found *jsonrpc.Response
		_, _ = readEvents(bytes.NewReader(body), MaxErrorBody, func(ev event) bool {
			if r, ok := decodeEvent(ev).(*jsonrpc.Response); ok {
				found = r
				return false
			}
			return true
		})
		return found
	}
	if bytes.TrimSpace(body)[0] != '{' {
		return nil
	}
	if r, ok := decodeMessage(body).(*jsonrpc.Response); ok {
		return r
	}
	return nil
}

func decodeMessage(b []byte) jsonrpc.Message {
	m, err := jsonrpc.DecodeMessage(b)
	if err != nil {
		return nil
	}
	return m
}

// trustedLength is the largest announced length readLimited allocates at
// once: what a server announces beyond it is allocated as it arrives.
const trustedLength = 4 << 20

// readLimited reads all of r, failing with a [*MessageTooLargeError] when
// it holds more than limit bytes. size is r's length when known (a
// response's ContentLength; -1 if not): then the body is read into one
// slice of that length, instead of one that grows by copying, when that
// is at most trustedLength (a server announcing more costs what it sends,
// not what it announces).
func readLimited(r io.Reader, limit int, size int64) ([]byte, error) {
	if size > int64(limit) {
		return nil, &MessageTooLargeError{Limit: limit}
	}
	if size >= 0 {
		if size > trustedLength {
			b, err := io.ReadAll(io.LimitReader(r, size))
			if err == nil && int64(len(b)) < size {
				err = io.ErrUnexpectedEOF
			}
			return b, err
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	b, err := io.ReadAll(io.LimitReader(r, min(int64(limit), math.MaxInt64-1)+1)) // min: no wrap
	if err != nil {
		return nil, err
	}
	if len(b) > limit {
		return nil, &MessageTooLargeError{Limit: limit}
	}
	return b, nil
}

// drain discards a little of a body we do not need, so that the
// connection can be reused, and closes it.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	body.Close()
}

// sameOriginClient is the client of every connection without an
// HTTPClient or CrossOriginRedirects: its policy needs no header names, so
// one immutable client serves them all.
var sameOriginClient = &http.Client{Transport: pool, CheckRedirect: redirectPolicy(nil, false, nil)}

// pool is the HTTP connection pool of every connection without an
// HTTPClient: one for the process, set up as http.DefaultTransport but
// apart from it, so that code closing http.DefaultTransport's idle
// connections (httptest.Server.Close does, and so does
// http.DefaultClient.CloseIdleConnections) never breaks a request of ours
// that was taking one of them.
var pool = http.DefaultTransport.(*http.Transport).Clone()

// DefaultPool returns the HTTP connection pool that the transports share
// when they are given no HTTPClient: one per process, configured as
// http.DefaultTransport (its dial, TLS and proxy settings) but apart from
// it. A RoundTripper that wraps the default (a bearer token, say) should
// wrap this one to share its connections.
func DefaultPool() http.RoundTripper { return pool }

// CloseIdleConnections closes the idle TCP connections of [DefaultPool].
// They belong to the pool, not to any connection ([Transport] Close ends
// its requests and streams but leaves reusable TCP connections to the
// pool), as with net/http's own pool; a program or test that counts its
// goroutines calls it first.
func CloseIdleConnections() { pool.CloseIdleConnections() }

// requestError turns the error of http.Client.Do into the documented
// error: ctx.Err() when the caller gave up, [ErrClosed] when the
// connection closed, a [*RedirectError] for a redirect not followed,
// otherwise a [*NetworkError].
func requestError(ctx, reqCtx context.Context, op, endpoint string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	cause := context.Cause(reqCtx)
	switch {
	case errors.Is(cause, errClosing):
		return ErrClosed
	case errors.Is(cause, errStreamCanceled):
		return errStreamCanceled
	case errors.As(cause, new(headerTimeoutError)):
		return &NetworkError{Op: op, URL: endpoint, Err: cause}
	}
	if re, ok := errors.AsType[*RedirectError](err); ok {
		return re
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return &NetworkError{Op: op, URL: endpoint, Err: err}
}

func discardLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return discardSlog // one for all connections: a logger is immutable
	}
	return l
}
