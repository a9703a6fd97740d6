package auth

import (
	"io"
	"net/http"
)

// RoundTripper returns an http.RoundTripper that adds the credentials of
// [Client.Header] to requests on the protected resource's origin (and
// nothing to others), on top of base (nil means http.DefaultTransport).
// With DPoP it records server nonces (DPoP-Nonce) and retries a request
// once when the server answers 401 with error="use_dpop_nonce" (when the
// body can be replayed). Use it as the Transport of the MCP HTTP client.
func (c *Client) RoundTripper(base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &authTransport{c: c, base: base}
}

type authTransport struct {
	c    *Client
	base http.RoundTripper
}

func (t *authTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if origin(req.URL.String()) != t.c.origin {
		return t.base.RoundTrip(req)
	}
	r := req.Clone(req.Context())
	if err := t.c.Header(req.Context(), r); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || t.c.dpop == nil {
		return resp, err
	}
	changed := t.c.dpop.observe(r.URL.String(), resp.Header)
	if !changed || resp.StatusCode != http.StatusUnauthorized {
		return resp, nil
	}
	ch, ok := findChallenge(ParseChallenges(resp.Header.Get("WWW-Authenticate")), "DPoP")
	if !ok || ch.Error() != "use_dpop_nonce" || (req.Body != nil && req.GetBody == nil) {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, maxMetadataBody))
	resp.Body.Close()
	r2 := req.Clone(req.Context())
	if req.Body != nil {
		b, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		r2.Body = b
	}
	if err := t.c.Header(req.Context(), r2); err != nil {
		return nil, err
	}
	resp, err = t.base.RoundTrip(r2)
	if err == nil {
		// The answer to the retry may carry the next nonce too.
		t.c.dpop.observe(r2.URL.String(), resp.Header)
	}
	return resp, err
}
