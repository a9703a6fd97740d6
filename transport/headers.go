package transport

import (
	"context"
	"net/http"
)

type headersKey struct{}

// WithRequestHeaders returns a context that makes an HTTP connection's
// Write add h to the POST of that one message (for example Mcp-Name and
// Mcp-Param-* headers computed by the session layer). Transports without
// headers ignore it. h must not be modified afterwards.
func WithRequestHeaders(ctx context.Context, h http.Header) context.Context {
	return context.WithValue(ctx, headersKey{}, h)
}

// RequestHeaders returns the headers set by [WithRequestHeaders], or nil.
func RequestHeaders(ctx context.Context) http.Header {
	h, _ := ctx.Value(headersKey{}).(http.Header)
	return h
}
