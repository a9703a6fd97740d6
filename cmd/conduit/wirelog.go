package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
)

// maxLoggedLine bounds one logged body line; longer lines are cut.
const maxLoggedLine = 4 << 10

// wireLogger is the -v wire log of HTTP targets: an http.RoundTripper that
// logs every request (method, URL, MCP headers, body) and every response
// (status, content type, MCP headers, then the body line by line as the
// client reads it, so SSE streams are logged as they arrive). WebSocket
// upgrades are logged but their frames are not (the body of a 101
// response is the connection itself and is passed through untouched).
type wireLogger struct {
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

// RoundTrip logs req and its response.
func (l *wireLogger) RoundTrip(req *http.Request) (*http.Response, error) {
	attrs := append([]any{"method", req.Method, "url", req.URL.String()}, headerAttrs(req.Header)...)
	if req.Body != nil && req.GetBody != nil {
		if body, err := req.GetBody(); err == nil {
			b, _ := io.ReadAll(io.LimitReader(body, maxLoggedLine))
			body.Close()
			attrs = append(attrs, "body", string(b))
		}
	}
	l.log.Debug("wire: → http request", attrs...)
	resp, err := l.base.RoundTrip(req)
	if err != nil {
		l.log.Debug("wire: ← http error", "url", req.URL.String(), "err", err)
		return nil, err
	}
	attrs = append([]any{"status", resp.StatusCode, "content-type", resp.Header.Get("Content-Type")}, headerAttrs(resp.Header)...)
	l.log.Debug("wire: ← http response", attrs...)
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.Body != nil {
		resp.Body = &loggedBody{ReadCloser: resp.Body, log: l.log}
	}
	return resp, nil
}

// loggedBody logs a response body line by line as it is read.
type loggedBody struct {
	io.ReadCloser
	log *slog.Logger

	mu      sync.Mutex // guards partial: Read and Close may race
	partial []byte     // the current unfinished line
}

func (b *loggedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	data := p[:n]
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		b.emitLocked(append(b.partial, data[:i]...))
		b.partial, data = b.partial[:0], data[i+1:]
	}
	if room := maxLoggedLine - len(b.partial); room > 0 {
		b.partial = append(b.partial, data[:min(len(data), room)]...)
	}
	if err != nil && len(b.partial) > 0 {
		b.emitLocked(b.partial)
		b.partial = b.partial[:0]
	}
	return n, err
}

func (b *loggedBody) emitLocked(line []byte) {
	s := strings.TrimRight(string(line), "\r")
	if s == "" {
		return
	}
	if len(s) > maxLoggedLine {
		s = s[:maxLoggedLine] + "…"
	}
	b.log.Debug("wire: ← " + s)
}
