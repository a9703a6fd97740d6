package auth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// tokenCall describes the additions to the requests of one token-endpoint
// exchange done through golang.org/x/oauth2: x/oauth2 builds the request
// and parses the response, and tokenTransport adds what it cannot express
// (the RFC 8707 resource on every grant including refresh, a fresh
// private_key_jwt assertion per request, and DPoP proofs with nonce retry).
type tokenCall struct {
	// params are added to the form when absent.
	params url.Values
	// assertion, when set, returns a fresh client assertion.
	assertion func() (string, error)
	// dpop, when set, signs a proof for each request.
	dpop *dpopSigner
	c    *Client
	// ctx bounds requests built without a context: x/oauth2's device
	// authorization request uses http.NewRequest. The tokenCall lives for
	// one exchange only.
	ctx context.Context
	// body, when set, receives the body of the exchange's response (up
	// to maxMetadataBody bytes), for the fields x/oauth2 mishandles.
	body *[]byte
}

// tokenTransport is the http.RoundTripper of token-endpoint requests.
type tokenTransport struct {
	base    http.RoundTripper
	call    tokenCall
	timeout time.Duration // per request; 0 means none
}

// maxTokenRequest bounds the form we rewrite (x/oauth2 builds it; this is
// only a guard).
const maxTokenRequest = 1 << 20

func (t *tokenTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.roundTrip(req)
	if err != nil || t.call.body == nil {
		return resp, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	*t.call.body = b
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (t *tokenTransport) roundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil {
		return t.base.RoundTrip(req)
	}
	if req.Context() == context.Background() && t.call.ctx != nil {
		req = req.WithContext(t.call.ctx)
	}
	raw, err := io.ReadAll(io.LimitReader(req.Body, maxTokenRequest))
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	form, err := url.ParseQuery(string(raw))
	if err != nil {
		return nil, err
	}
	for k, vs := range t.call.params {
		if _, ok := form[k]; !ok {
			form[k] = vs
		}
	}
	for attempt := 0; ; attempt++ {
		if t.call.assertion != nil {
			a, err := t.call.assertion()
			if err != nil {
				return nil, err
			}
			form.Set("client_assertion_type", clientAssertionType)
			form.Set("client_assertion", a)
		}
		body := form.Encode()
		rctx, cancel := req.Context(), context.CancelFunc(func() {})
		if t.timeout > 0 {
			rctx, cancel = context.WithTimeout(rctx, t.timeout)
		}
		r := req.Clone(rctx)
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = int64(len(body))
		r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
		r.Header.Set("Content-Length", strconv.Itoa(len(body)))
		if t.call.dpop != nil {
			p, err := t.call.dpop.proof(r.Method, r.URL.String(), "", t.call.c.now())
			if err != nil {
				cancel()
				return nil, err
			}
			r.Header.Set("DPoP", p)
		}
		resp, err := t.base.RoundTrip(r)
		if err != nil {
			cancel()
			return nil, err
		}
		// x/oauth2's device authorization request reads the body to EOF
		// but never closes it; closing at EOF releases the connection
		// and the timeout.
		resp.Body = &closeOnEOF{ReadCloser: resp.Body, cancel: cancel}
		if t.call.dpop == nil {
			return resp, nil
		}
		changed := t.call.dpop.observe(r.URL.String(), resp.Header)
		if attempt > 0 || !changed || resp.StatusCode != http.StatusBadRequest {
			return resp, nil
		}
		// RFC 9449 §8: a use_dpop_nonce error carries a fresh nonce;
		// retry once with it.
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxMetadataBody))
		resp.Body.Close()
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(b, &e) != nil || e.Error != "use_dpop_nonce" {
			resp.Body = io.NopCloser(bytes.NewReader(b))
			return resp, nil
		}
	}
}

// tokenContext returns ctx carrying the HTTP client x/oauth2 should use
// for one token-endpoint exchange.
func (c *Client) tokenContext(ctx context.Context, call tokenCall) context.Context {
	call.c = c
	call.ctx = ctx
	base := c.hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc := &http.Client{
		// No Client.Timeout: it would leave a timer goroutine behind for
		// x/oauth2's device request, whose body is never closed;
		// tokenTransport applies the timeout per request instead.
		Transport: &tokenTransport{base: base, call: call, timeout: c.hc.Timeout},
		// A redirect resends the credentials in the form: within the
		// token endpoint's origin only (c.hc's policy).
		CheckRedirect: c.hc.CheckRedirect,
	}
	return context.WithValue(ctx, oauth2.HTTPClient, hc)
}

// tokenError converts an x/oauth2 error into a [*TokenError] (no secrets:
// the body is not included).
func tokenError(endpoint string, err error) error {
	if re, ok := errors.AsType[*oauth2.RetrieveError](err); ok {
		te := &TokenError{Endpoint: endpoint, Code: re.ErrorCode, Description: re.ErrorDescription}
		if re.Response != nil {
			te.StatusCode = re.Response.StatusCode
		}
		return te
	}
	if err == nil {
		return nil
	}
	return &TokenError{Endpoint: endpoint, Err: err}
}

// closeOnEOF closes its body when a Read reaches the end.
type closeOnEOF struct {
	io.ReadCloser
	cancel context.CancelFunc
	closed bool
}

func (b *closeOnEOF) Read(p []byte) (int, error) {
	if b.closed {
		return 0, io.EOF
	}
	n, err := b.ReadCloser.Read(p)
	if err != nil {
		b.closed = true
		b.ReadCloser.Close()
		b.cancel()
	}
	return n, err
}

func (b *closeOnEOF) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	defer b.cancel()
	return b.ReadCloser.Close()
}
