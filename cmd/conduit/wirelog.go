package main

import (
	"log/slog"
	"net/http"
	"strings"
)

// The -v wire log has two parts. Every JSON-RPC message, on every
// transport (stdio, HTTP, WebSocket), is logged by the client's message
// tap (client.WithWireLog) as "wire: send" / "wire: recv". For http(s)
// and ws(s) targets, httpLogger adds one line per HTTP exchange: the
// request (method, URL, MCP headers) and the response status (content
// type, MCP headers), which the messages alone do not show (session ids,
// 4xx/5xx answers, the WebSocket upgrade).
type httpLogger struct {
	base http.RoundTripper
	log  *slog.Logger
}

// mcpHeaders are the headers worth showing in the wire log.
var mcpHeaders = []string{"Mcp-Session-Id", "Mcp-Protocol-Version", "Mcp-Method", "Mcp-Name", "Last-Event-Id", "Accept", "Www-Authenticate"}

func headerAttrs(h http.Header) []any {
	var attrs []any
	for _, k := range mcpHeaders {
		if v := h.Get(k); v != "" {
			attrs = append(attrs, k, v)
		}
	}
	for k, v := range h {
		if strings.HasPrefix(k, "Mcp-Param-") && len(v) > 0 {
			attrs = append(attrs, k, v[0])
		}
	}
	return attrs
}

// RoundTrip logs req and the status of its response.
func (l *httpLogger) RoundTrip(req *http.Request) (*http.Response, error) {
	attrs := append([]any{"method", req.Method, "url", req.URL.String()}, headerAttrs(req.Header)...)
	l.log.Debug("wire: → http request", attrs...)
	resp, err := l.base.RoundTrip(req)
	if err != nil {
		l.log.Debug("wire: ← http error", "url", req.URL.String(), "err", err)
		return nil, err
	}
	attrs = append([]any{"status", resp.StatusCode, "content-type", resp.Header.Get("Content-Type")}, headerAttrs(resp.Header)...)
	l.log.Debug("wire: ← http response", attrs...)
	return resp, nil
}
