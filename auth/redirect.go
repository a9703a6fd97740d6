package auth

import (
	"errors"
	"net/http"
	"strings"

	"github.com/conduitmcp/conduit/transport"
)

// maxRedirects is how many redirects one request of the auth package
// follows, as net/http's default policy.
const maxRedirects = 10

// withRedirects returns a copy of hc whose CheckRedirect applies policy
// before hc's own (or net/http's default limit).
func withRedirects(hc *http.Client, policy func(req *http.Request, via []*http.Request) error) *http.Client {
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := policy(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= maxRedirects {
			return errors.New("auth: stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// sameOriginRedirects is the policy of the requests that carry
// credentials (registration, the token endpoint): a redirect is followed
// within the origin of the first request only; one to another origin
// fails with a [*transport.RedirectError] naming both.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	from, to := origin(via[0].URL.String()), origin(req.URL.String())
	if from == "" || from != to {
		return &transport.RedirectError{From: from, To: to}
	}
	return nil
}

// discoveryRedirects is the policy of metadata discovery, which carries
// no credential: a redirect may lead to another origin, but never from
// https to http (a [*transport.RedirectError]), and never to an endpoint
// checkSecure rejects.
func discoveryRedirects(req *http.Request, via []*http.Request) error {
	prev := via[len(via)-1].URL
	if strings.EqualFold(prev.Scheme, "https") && !strings.EqualFold(req.URL.Scheme, "https") {
		return &transport.RedirectError{From: origin(prev.String()), To: origin(req.URL.String())}
	}
	return checkSecure(req.URL.String())
}
