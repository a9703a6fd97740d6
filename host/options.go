package host

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Defaults of [Options] and [ServerOptions].
const (
	// DefaultConnectTimeout bounds one connection attempt (process start
	// or HTTP connect, the era probe and the handshake).
	DefaultConnectTimeout = 30 * time.Second
	// DefaultListTimeout bounds one refresh of a server's tools, prompts
	// and resources.
	DefaultListTimeout = 30 * time.Second
	// DefaultInitialBackoff and DefaultMaxBackoff pace reconnection.
	DefaultInitialBackoff = 500 * time.Millisecond
	DefaultMaxBackoff     = 30 * time.Second
	// CloseTimeout bounds [Host.Close].
	CloseTimeout = 15 * time.Second
)

// ServerOptions are the options of one server; [Options.Server] returns
// them. The zero value works: auto negotiation, no handler, the
// defaults below.
type ServerOptions struct {
	// Protocol selects the era negotiation (client.WithProtocol). Zero:
	// client.Auto.
	Protocol client.Protocol
	// Handler serves the server's requests and hears its notifications
	// (client.WithHandler); nil advertises no client capabilities. The
	// host wraps it to hear list changes; the wrapper unwraps to it, so
	// the capabilities advertised are still exactly what it implements.
	Handler any
	// Header is added to the file's headers on every HTTP request (it
	// wins for a key both set). Ignored for stdio.
	Header http.Header
	// Auth configures authorization for HTTP servers (client.WithAuth).
	// Nil: none.
	Auth *client.Auth
	// HTTPClient sends the HTTP requests; nil: the transport's own.
	HTTPClient *http.Client
	// Env holds extra "KEY=value" entries for a stdio server, after the
	// file's env. InheritEnv passes this process's whole environment
	// (by default only a few variables such as PATH and HOME are; see
	// transport.Stdio).
	Env        []string
	InheritEnv bool
	// Stderr receives a copy of a stdio server's stderr; nil: none. It
	// must not block.
	Stderr io.Writer
	// ConnectTimeout bounds each connection attempt; 0 means
	// [DefaultConnectTimeout], negative means no bound but the host's
	// lifetime.
	ConnectTimeout time.Duration
	// ProbeTimeout bounds the era probe (client.RetryPolicy.ProbeTimeout);
	// 0: the client's default. A client.WithRetry in ClientOptions
	// replaces it.
	ProbeTimeout time.Duration
	// IdleTimeout ends a request that hears nothing from the server
	// (neither its answer nor a progress notification) for this long;
	// each progress notification starts it again
	// (client.WithIdleTimeout in client.WithCallDefaults). It does not
	// bound a request that keeps reporting progress: the caller's context
	// does. 0: none but the caller's context.
	IdleTimeout time.Duration
	// ClientOptions are passed to the client last, so they win.
	ClientOptions []client.Option
}

// connectTimeout returns the effective bound of one attempt, or 0.
func (o *ServerOptions) connectTimeout() time.Duration {
	switch {
	case o.ConnectTimeout == 0:
		return DefaultConnectTimeout
	case o.ConnectTimeout < 0:
		return 0
	}
	return o.ConnectTimeout
}

// clientOptions is the one place that turns a server's configuration
// into client options.
func clientOptions(sc ServerConfig, o *ServerOptions, h any, logger *slog.Logger) []client.Option {
	opts := []client.Option{
		client.WithProtocol(o.Protocol),
		client.WithHandler(h),
		client.WithClientInfo(protocol.Implementation{Name: "conduit-host", Version: "0"}),
	}
	if logger != nil {
		opts = append(opts, client.WithLogger(logger.With("server", sc.Name)))
	}
	if o.ProbeTimeout > 0 {
		opts = append(opts, client.WithRetry(client.RetryPolicy{ProbeTimeout: o.ProbeTimeout}))
	}
	if o.IdleTimeout > 0 {
		opts = append(opts, client.WithCallDefaults(client.WithIdleTimeout(o.IdleTimeout)))
	}
	if o.Auth != nil {
		opts = append(opts, client.WithAuth(*o.Auth))
	}
	if o.HTTPClient != nil {
		opts = append(opts, client.WithHTTPClient(o.HTTPClient))
	}
	if sc.Type == TypeWebSocket && o.Auth != nil {
		opts = append(opts, client.WithHeaders(mergeHeaders(sc.Header, o.Header)))
	}
	return append(opts, o.ClientOptions...)
}

// newTransport builds the transport of sc. A WebSocket server with Auth
// has none: it is dialed with client.Dial, which owns the WebSocket
// transport's authorization plumbing.
func newTransport(sc ServerConfig, o *ServerOptions, logger *slog.Logger) transport.Transport {
	hdr := mergeHeaders(sc.Header, o.Header)
	var tokens transport.TokenSource
	var headerFunc func(context.Context, *http.Request) error
	if o.Auth != nil {
		tokens, headerFunc = o.Auth.Tokens, o.Auth.Header
	}
	switch sc.Type {
	case TypeStdio:
		env := make([]string, 0, len(sc.Env)+len(o.Env))
		keys := make([]string, 0, len(sc.Env))
		for k := range sc.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+sc.Env[k])
		}
		return &transport.Stdio{
			Path: sc.Command, Args: sc.Args, Dir: sc.Dir,
			Env: append(env, o.Env...), InheritEnv: o.InheritEnv,
			Stderr: o.Stderr, Logger: logger,
		}
	case TypeSSE:
		return &transport.SSE{URL: sc.URL, HTTPClient: o.HTTPClient, Header: hdr,
			TokenSource: tokens, HeaderFunc: headerFunc, Logger: logger}
	case TypeWebSocket:
		if o.Auth != nil {
			return nil
		}
		return &transport.WebSocket{URL: sc.URL, HTTPClient: o.HTTPClient, Header: hdr, Logger: logger}
	case TypeHTTP:
		return &transport.StreamableHTTP{URL: sc.URL, HTTPClient: o.HTTPClient, Header: hdr,
			TokenSource: tokens, HeaderFunc: headerFunc, Logger: logger}
	}
	return nil
}

func mergeHeaders(a, b http.Header) http.Header {
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	h := a.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range b {
		h[k] = append([]string(nil), v...)
	}
	return h
}
