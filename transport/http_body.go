package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
)

// postBody is the body of a POST, kept so that a failed POST can tell
// whether it was written. net/http reads a request's body only once it
// holds a connection for it, and writes the headers with the body (of a
// *bytes.Reader) in one go, so a POST whose body was never read was not
// written: no server has it. That is how a POST that failed while its
// connection was being made (a dial in progress, a connection closed
// meanwhile, a dial or proxy or TLS handshake that failed) is told from
// one that may have been delivered, whatever its error says.
type postBody struct {
	r    bytes.Reader // the body as first sent (net/http knows it is in memory)
	data []byte
	// reopened is set when GetBody gave the body again (a redirect, a
	// retry of net/http's own): a copy's reads are not followed, so the
	// POST then counts as written.
	reopened atomic.Bool
}

// newPostRequest returns a POST of data to endpoint under ctx and its
// body (see postBody). endpoint is the URL http.NewRequest would parse
// from the connection's URL (Connect parsed it once: see endpointOf);
// each request gets a copy, as it would get a URL of its own.
func newPostRequest(ctx context.Context, endpoint *url.URL, data []byte) (*http.Request, *postBody, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", nil) // an empty URL: nothing to parse
	if err != nil {
		return nil, nil, err
	}
	*req.URL = *endpoint
	req.Host = endpoint.Host
	b := &postBody{data: data}
	b.r.Reset(data)
	req.Body, req.GetBody, req.ContentLength = io.NopCloser(&b.r), b.reopen, int64(len(data))
	return req, b, nil
}

// endpointOf returns the URL http.NewRequest makes of raw, the string of
// parsed (parsed from orig): parsed itself when raw is orig (the usual
// case), else raw parsed again; either way with the empty port removed
// from its host, as NewRequest does.
func endpointOf(parsed *url.URL, orig, raw string) (*url.URL, error) {
	u := parsed
	if raw != orig {
		var err error
		if u, err = url.Parse(raw); err != nil {
			return nil, err
		}
	}
	if strings.LastIndex(u.Host, ":") > strings.LastIndex(u.Host, "]") {
		u.Host = strings.TrimSuffix(u.Host, ":")
	}
	return u, nil
}

func (b *postBody) reopen() (io.ReadCloser, error) {
	b.reopened.Store(true)
	return io.NopCloser(bytes.NewReader(b.data)), nil
}

// written reports whether req, sent with body b, may have been written,
// given err, the error of its http.Client.Do. It is asked only then: an
// http.Transport whose RoundTrip failed reads no more of the body (it
// waits for its write to end first). A redirect that was followed (the
// error names another request than req) means a server answered; a body
// GetBody gave again, or one that a hook replaced, leaves no record.
func (b *postBody) written(req *http.Request, err error) bool {
	if ue, ok := errors.AsType[*url.Error](err); !ok || ue.Op != "Post" || ue.URL != req.URL.String() {
		return true
	}
	if req.Body != io.NopCloser(&b.r) {
		return true
	}
	return b.reopened.Load() || b.r.Len() < len(b.data)
}

// postFailed is the error of the POST req to endpoint, sent with body,
// whose http.Client.Do failed with err (ctx the caller's, reqCtx the
// request's: see requestError). A POST that was not written (see
// postBody) fails with ErrClosed when the connection closed meanwhile and
// otherwise with a [*NetworkError] whose Unsent is set (wrapping ctx's
// error when ctx ended it), never with one that says the request was in
// flight.
func postFailed(ctx, reqCtx context.Context, endpoint string, req *http.Request, body *postBody, err error) error {
	written := body.written(req, err)
	err = requestError(ctx, reqCtx, http.MethodPost, endpoint, err)
	if written {
		return inFlight(http.MethodPost, endpoint, err)
	}
	switch ne, ok := err.(*NetworkError); {
	case ok:
		ne.Unsent = true
	case ctx.Err() != nil && err == ctx.Err():
		// The caller's context ended it before it was sent: say so,
		// still matching the context's error.
		return &NetworkError{Op: http.MethodPost, URL: endpoint, Err: err, Unsent: true}
	}
	return err
}
