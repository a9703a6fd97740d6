package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Target kinds.
const (
	targetEmbedded = "embedded"
	targetURL      = "url"
	targetCommand  = "command"
)

// target says where the server is.
type target struct {
	kind string   // targetEmbedded, targetURL or targetCommand
	url  string   // targetURL
	argv []string // targetCommand: the program and its arguments
}

// String describes t for messages.
func (t target) String() string {
	switch t.kind {
	case targetURL:
		return t.url
	case targetCommand:
		return strings.Join(t.argv, " ")
	}
	return "the embedded test server"
}

// isTargetURL reports whether s is a URL conduit can dial.
func isTargetURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "ws", "wss":
		return true
	}
	return false
}

// parseTarget splits the positional arguments into the target and the
// command's own arguments. A command after "--" is the target; otherwise a
// first argument with an http, https, ws or wss scheme is, unless the
// command takes a fixed number of arguments and there are no more than
// that (so "conduit read https://host/doc" reads a resource of the
// embedded server); otherwise the embedded server is.
func parseTarget(positional, command []string, fixed int) (target, []string, error) {
	if len(command) > 0 {
		return target{kind: targetCommand, argv: command}, positional, nil
	}
	if len(positional) > 0 && isTargetURL(positional[0]) && (fixed < 0 || len(positional) > fixed) {
		u, err := url.Parse(positional[0])
		if err != nil || u.Host == "" {
			return target{}, nil, usagef("target %q is not a valid URL", positional[0])
		}
		return target{kind: targetURL, url: positional[0]}, positional[1:], nil
	}
	return target{kind: targetEmbedded}, positional, nil
}

// checkProtocol validates --protocol.
func checkProtocol(p string) error {
	switch p {
	case "auto", "modern", "legacy":
		return nil
	}
	if _, err := time.Parse(time.DateOnly, p); err == nil {
		return nil
	}
	return usagef("--protocol %q: want auto, modern, legacy or a version date such as 2025-06-18", p)
}

func (inv *invocation) protocolOption() client.Protocol {
	switch inv.protocol {
	case "auto":
		return client.Auto
	case "modern":
		return client.Modern
	case "legacy":
		return client.Legacy
	}
	return client.Pin(inv.protocol)
}

// logger returns the -v logger (debug level, text on stderr) or nil.
func (inv *invocation) logger() *slog.Logger {
	if !inv.verbose {
		return nil
	}
	return slog.New(slog.NewTextHandler(inv.std.err, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// connectError is a failure to connect and negotiate (exit status 3).
type connectError struct {
	target target
	err    error
}

func (e *connectError) Error() string {
	return fmt.Sprintf("connecting to %s: %v", e.target, e.err)
}

func (e *connectError) Unwrap() error { return e.err }

// conn is a connected client and what must be stopped with it.
type conn struct {
	*client.Client
	embedded *embeddedServer // nil unless the target is the embedded server
	release  func()          // releases the authorization flow's resources; may be nil
	record   func() error    // flushes and closes the --record transcript; may be nil
}

// close closes the client, then the embedded server.
func (c *conn) close() {
	if c.Client != nil {
		c.Client.Close()
	}
	if c.embedded != nil {
		c.embedded.close()
	}
	if c.release != nil {
		c.release()
	}
	if c.record != nil {
		_ = c.record()
	}
}

// dial connects to the target and negotiates. h serves server requests
// (nil for none). The returned conn must be closed, even on error (it may
// hold the embedded server).
func (inv *invocation) dial(ctx context.Context, h any) (*conn, error) {
	if inv.configFile != "" {
		return inv.dialConfig(ctx, h) // config.go: the --server server
	}
	opts := []client.Option{
		client.WithProtocol(inv.protocolOption()),
		// The CLI exists to reach any server: the older versions too.
		client.WithOlderVersions(true),
		client.WithClientInfo(protocol.Implementation{Name: "conduit-cli", Title: "Conduit CLI", Version: version}),
	}
	if l := inv.logger(); l != nil {
		opts = append(opts,
			client.WithLogger(l),
			client.WithWireLog(l, slog.LevelDebug),
			client.WithHTTPClient(&http.Client{Transport: &httpLogger{base: http.DefaultTransport, log: l}}))
	}
	if h != nil {
		opts = append(opts, client.WithHandler(h))
	}
	if len(inv.headers) > 0 {
		hdr := http.Header{}
		for _, kv := range inv.headers {
			k, v, _ := strings.Cut(kv, ":")
			hdr.Add(k, v)
		}
		opts = append(opts, client.WithHeaders(hdr))
	}
	c := &conn{}
	authOpt, release, err := inv.authOption()
	if err != nil {
		return c, err
	}
	c.release = release
	if authOpt != nil {
		opts = append(opts, authOpt)
	}
	recOpt, stopRecord, err := inv.recordOption()
	if err != nil {
		return c, fmt.Errorf("--record: %w", err)
	}
	if recOpt != nil {
		c.record = stopRecord
		opts = append(opts, recOpt)
	}
	switch inv.target.kind {
	case targetURL:
		c.Client, err = client.Dial(ctx, inv.target.url, opts...)
	case targetCommand:
		st := transport.Command(inv.target.argv[0], inv.target.argv[1:]...)
		st.Logger = inv.logger()
		if inv.verbose {
			st.Stderr = inv.std.err
		}
		c.Client, err = client.Connect(ctx, st, opts...)
	default:
		c.embedded, err = startEmbedded(inv.logger())
		if err != nil {
			return c, fmt.Errorf("starting the embedded server: %w", err)
		}
		c.Client, err = client.Dial(ctx, c.embedded.url, opts...)
	}
	if err != nil {
		c.Client = nil
		if ce, ok := errors.AsType[*client.Error](err); ok && ce.Kind == client.KindInvalid && errors.Is(err, client.ErrNoCommonVersion) {
			return c, usagef("--protocol %s: not a version conduit speaks", inv.protocol)
		}
		return c, &connectError{target: inv.target, err: err}
	}
	return c, nil
}

// embeddedServer is Conduit's dual-era test server, served over HTTP on a
// loopback port for the duration of one command.
type embeddedServer struct {
	srv  *conduittest.Server
	hs   *http.Server
	done chan struct{} // closed when Serve returned
	url  string
}

// startEmbedded serves the conduittest server's Streamable HTTP handler at
// http://127.0.0.1:PORT/mcp. Streamable HTTP is the most realistic of its
// transports: it exercises headers, sessions and SSE streams.
func startEmbedded(logger *slog.Logger) (*embeddedServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv, err := conduittest.New(conduittest.WithLogger(logger), conduittest.WithServerInfo(
		protocol.Implementation{Name: "conduit-testserver", Title: "Conduit embedded test server", Version: version},
		"A dual-era demo server: try the tools echo, add, slow (progress), ask_user (elicitation) and sample (sampling)."))
	if err != nil {
		ln.Close()
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", srv.Handler())
	e := &embeddedServer{
		srv:  srv,
		hs:   &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: nil},
		done: make(chan struct{}),
		url:  "http://" + ln.Addr().String() + "/mcp",
	}
	go func() {
		defer close(e.done)
		_ = e.hs.Serve(ln) // returns http.ErrServerClosed after close
	}()
	return e, nil
}

// close ends the test server's streams first (long-lived SSE responses end
// only then), then the HTTP server, and waits for it.
func (e *embeddedServer) close() {
	e.srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := e.hs.Shutdown(ctx); err != nil {
		e.hs.Close()
	}
	<-e.done
}

// version is the CLI's version, sent as clientInfo.
const version = "0.1.0"

// withTimeout applies --timeout to ctx.
func (inv *invocation) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if inv.timeout > 0 {
		return context.WithTimeout(ctx, inv.timeout)
	}
	return context.WithCancel(ctx)
}
