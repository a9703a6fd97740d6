package transport

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/conduitmcp/conduit/protocol"
)

// ErrCrossOriginRedirect is matched (errors.Is) by every [*RedirectError]:
// a request of an HTTP transport (a POST, GET or DELETE of Streamable
// HTTP or HTTP+SSE, a WebSocket handshake) redirected to another origin
// than the one it was sent to, and not followed.
var ErrCrossOriginRedirect = errors.New("transport: redirect to another origin not followed")

// RedirectError is the error of a request whose redirect was not
// followed: by default a transport follows redirects within the origin
// (scheme, host and port) of the request only, and with
// CrossOriginRedirects set it still never follows one from https to http.
// It matches [ErrCrossOriginRedirect].
type RedirectError struct {
	// From is the origin the request was sent to, such as
	// "https://mcp.example.com"; To is the origin of the redirect's
	// target.
	From, To string
}

func (e *RedirectError) Error() string {
	why := "another origin"
	if e.downgrade() {
		why = "from https to http"
	}
	return "transport: redirect from " + e.From + " to " + e.To + " not followed: " + why
}

// Is reports whether target is [ErrCrossOriginRedirect].
func (e *RedirectError) Is(target error) bool { return target == ErrCrossOriginRedirect }

func (e *RedirectError) downgrade() bool {
	return strings.HasPrefix(e.From, "https:") && strings.HasPrefix(e.To, "http:")
}

// originOf returns the origin of u as scheme://host[:port], lower case.
func originOf(u *url.URL) string {
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// redirectPolicy returns the CheckRedirect of one connection, wrapping
// next (nil: at most 10 redirects). A redirect to another origin than the
// first request's fails with a [*RedirectError] unless crossOrigin is set;
// then the request to another origin is sent without its body and
// without credentialHeaders, the static headers the transport adds
// (static names them), and every header the TokenSource or HeaderFunc
// (the auth hooks) set or changed on the first request (recorded in its
// context by applyHook). HeaderFunc runs only when a request is built,
// never on a redirect hop, so nothing attaches them again. A request that
// another origin sent back to the first one is stripped so too:
// net/http builds every hop from the first request, but where it goes
// was chosen by another origin. A hop from https to http is never
// followed.
func redirectPolicy(next func(*http.Request, []*http.Request) error, crossOrigin bool, static http.Header) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 {
			prev := via[len(via)-1].URL
			downgrade := strings.EqualFold(prev.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https")
			other := !sameOrigin(req.URL, via[0].URL)
			if other && !crossOrigin || downgrade {
				from := via[0].URL
				if downgrade {
					from = prev
				}
				return &RedirectError{From: originOf(from), To: originOf(req.URL)}
			}
			if other || leftOrigin(via) {
				stripForOtherOrigin(req, static)
			}
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
}

// leftOrigin reports whether a hop of via went to another origin than
// the first request's.
func leftOrigin(via []*http.Request) bool {
	for _, r := range via[1:] {
		if !sameOrigin(r.URL, via[0].URL) {
			return true
		}
	}
	return false
}

// stripForOtherOrigin removes from req, about to go to another origin,
// its body, its credentials and the transport's own headers.
func stripForOtherOrigin(req *http.Request, static http.Header) {
	for _, k := range credentialHeaders {
		req.Header.Del(k)
	}
	for k := range static {
		req.Header.Del(k)
	}
	if hooked, ok := req.Context().Value(hookedKey{}).([]string); ok {
		for _, k := range hooked {
			req.Header.Del(k)
		}
	}
	if req.Body != nil && req.Body != http.NoBody {
		req.Body.Close()
	}
	req.Body, req.GetBody, req.ContentLength = nil, nil, 0
	req.Header.Del("Content-Type")
}

// credentialHeaders never go to another origin: HTTP authentication,
// cookies, a DPoP proof, and the legacy session id (which names the
// session to whoever holds it).
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "DPoP", protocol.HeaderSessionID}

type hookedKey struct{}

// applyHook runs the HeaderFunc hook on req and returns req carrying, in
// its context, the names of the headers hook set or changed, for
// redirectPolicy. A nil hook returns req as it is.
func applyHook(ctx context.Context, req *http.Request, hook func(context.Context, *http.Request) error) (*http.Request, error) {
	if hook == nil {
		return req, nil
	}
	before := req.Header.Clone()
	if err := hook(ctx, req); err != nil {
		return nil, err
	}
	var hooked []string
	for k, vs := range req.Header {
		if !slices.Equal(before[k], vs) {
			hooked = append(hooked, k)
		}
	}
	if len(hooked) == 0 {
		return req, nil
	}
	return req.WithContext(context.WithValue(req.Context(), hookedKey{}, hooked)), nil
}

// sameOrigin compares scheme, host and port (defaulted by scheme).
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) &&
		strings.EqualFold(a.Hostname(), b.Hostname()) &&
		portOf(a) == portOf(b)
}

func portOf(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "wss":
		return "443"
	}
	return "80"
}
