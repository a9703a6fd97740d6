package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
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

	// What the trace (set only when the POST may go over HTTP/2: see
	// http2Modes) saw of the POST's latest transmission, for reopen.
	// plainH2: a connection without TLS speaks HTTP/2 (prior
	// knowledge). onH2: the latest connection speaks HTTP/2. sentWhole:
	// the request was written whole on it. answered: a response other
	// than an informational (1xx) one came on it.
	plainH2   bool
	onH2      atomic.Bool
	sentWhole atomic.Bool
	answered  atomic.Bool
	trace     httptrace.ClientTrace
}

// newPostRequest returns a POST of data to endpoint under ctx, to be sent
// by client, and its body (see postBody). endpoint is the URL
// http.NewRequest would parse from the connection's URL (Connect parsed
// it once: see endpointOf); each request gets a copy, as it would get a
// URL of its own.
func newPostRequest(ctx context.Context, client *http.Client, endpoint *url.URL, data []byte) (*http.Request, *postBody, error) {
	b := &postBody{data: data}
	if may, plain := http2Modes(client, endpoint); may {
		b.plainH2 = plain
		b.onH2.Store(plain)
		b.trace = httptrace.ClientTrace{GotConn: b.gotConn, WroteRequest: b.wroteRequest,
			GotFirstResponseByte: b.gotFirstResponseByte, Got1xxResponse: b.got1xxResponse}
		ctx = httptrace.WithClientTrace(ctx, &b.trace)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", nil) // an empty URL: nothing to parse
	if err != nil {
		return nil, nil, err
	}
	*req.URL = *endpoint
	req.Host = endpoint.Host
	b.r.Reset(data)
	req.Body, req.GetBody, req.ContentLength = io.NopCloser(&b.r), b.reopen, int64(len(data))
	return req, b, nil
}

// http2Modes reports whether client may send a request to u over HTTP/2,
// and whether a connection without TLS is then one: an *http.Transport
// whose Protocols are unencrypted HTTP/2 without HTTP/1 (prior
// knowledge). A connection with TLS tells by its negotiated protocol
// (gotConn). Through a RoundTripper of another type, a connection without
// TLS counts as HTTP/1.1.
func http2Modes(client *http.Client, u *url.URL) (may, plain bool) {
	rt := client.Transport
	if rt == nil {
		rt = http.DefaultTransport
	}
	if t, ok := rt.(*http.Transport); ok && t.Protocols != nil {
		plain = t.Protocols.UnencryptedHTTP2() && !t.Protocols.HTTP1()
	}
	return plain || u.Scheme == "https", plain
}

// gotConn, wroteRequest, gotFirstResponseByte and got1xxResponse are the
// trace of a POST that may go over HTTP/2 (see reopen). The first byte of
// a response is the first of its informational responses when it has
// some: those are no answer.
func (b *postBody) gotConn(ci httptrace.GotConnInfo) {
	h2 := b.plainH2
	if tc, ok := ci.Conn.(interface{ ConnectionState() tls.ConnectionState }); ok {
		h2 = tc.ConnectionState().NegotiatedProtocol == "h2"
	}
	b.onH2.Store(h2)
	// A new transmission (net/http asks for a connection for each).
	b.sentWhole.Store(false)
	b.answered.Store(false)
}

func (b *postBody) wroteRequest(wi httptrace.WroteRequestInfo) {
	if wi.Err == nil && b.onH2.Load() {
		b.sentWhole.Store(true)
	}
}

func (b *postBody) gotFirstResponseByte() { b.answered.Store(true) }

func (b *postBody) got1xxResponse(int, textproto.MIMEHeader) error {
	b.answered.Store(false)
	return nil
}

// errResent is the error GetBody gives net/http when it would send a POST
// again that an HTTP/2 server received whole without answering it.
var errResent = errors.New("transport: not sending the request again: its HTTP/2 stream failed after the request was written whole, before a response, so the server may have run it")

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

// reopen is the POST's GetBody: net/http asks for the body again to
// follow a redirect, and to send the request again after its connection
// failed. Over HTTP/1.1 it sends a POST again only when nothing of it was
// written; over HTTP/2 also after the server reset the request's stream
// with PROTOCOL_ERROR (or REFUSED_STREAM, or a GOAWAY that says the
// stream was not processed), up to seven times, even when the server had
// received the request whole and may have run it. A POST written whole on
// an HTTP/2 connection, and not answered since, is therefore not sent
// again: reopen fails, and so does the POST, as possibly delivered (the
// engine decides whether to replay it). That includes the resets by which
// a server says it did not process the request: their codes are not
// known here.
func (b *postBody) reopen() (io.ReadCloser, error) {
	if b.sentWhole.Load() && !b.answered.Load() {
		return nil, errResent
	}
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
