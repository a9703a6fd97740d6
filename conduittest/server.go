package conduittest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Era selects the protocol eras a [Server] speaks.
type Era int

// Eras.
const (
	// Both serves the modern and the legacy era and picks one per request,
	// as a dual-era server does: a request carrying the modern _meta
	// protocolVersion is modern, initialize opens a legacy session.
	Both Era = iota
	// Modern serves only 2026-07-28 (initialize is an unknown method).
	Modern
	// Legacy serves only 2025-11-25 and 2025-06-18 (server/discover is an
	// unknown method).
	Legacy
)

// String returns "both", "modern" or "legacy".
func (e Era) String() string {
	switch e {
	case Modern:
		return "modern"
	case Legacy:
		return "legacy"
	}
	return "both"
}

// ParseEra parses "both", "modern" or "legacy" (as conduit serve --era).
func ParseEra(s string) (Era, error) {
	switch s {
	case "both", "dual", "":
		return Both, nil
	case "modern":
		return Modern, nil
	case "legacy":
		return Legacy, nil
	}
	return Both, fmt.Errorf("conduittest: unknown era %q (want modern, legacy or both)", s)
}

func (e Era) internal() testserver.Era {
	switch e {
	case Modern:
		return testserver.ModernOnly
	case Legacy:
		return testserver.LegacyOnly
	}
	return testserver.Dual
}

// An Option configures a [Server].
type Option func(*config)

// config is what the options build.
type config struct {
	o   testserver.Options
	err error // the first invalid option
}

// WithEra selects the eras served; the default is [Both].
func WithEra(e Era) Option { return func(c *config) { c.o.Era = e.internal() } }

// WithFaults installs faults from the start; see [Server.SetFaults]. An
// invalid fault makes [New] fail.
func WithFaults(faults ...Fault) Option {
	return func(c *config) {
		tfs, err := parseFaults(faults)
		if err != nil && c.err == nil {
			c.err = err
		}
		c.o.Faults = append(c.o.Faults, tfs...)
	}
}

// WithVersions sets the protocol versions the server speaks, preferred
// first: those of 2026-07-28 and later are modern, the others legacy (an
// era left without a version keeps its defaults: 2026-07-28, and
// 2025-11-25 then 2025-06-18). For example WithVersions("2025-06-18")
// makes an older legacy server.
func WithVersions(versions ...string) Option {
	return func(c *config) {
		c.o.ModernVersions, c.o.LegacyVersions = nil, nil
		for _, v := range versions {
			if negotiation.EraOf(v) == negotiation.EraModern {
				c.o.ModernVersions = append(c.o.ModernVersions, v)
			} else {
				c.o.LegacyVersions = append(c.o.LegacyVersions, v)
			}
		}
	}
}

// WithPageSize makes the lists (tools, prompts, resources, templates)
// paginate with n items a page; the default is one page.
func WithPageSize(n int) Option { return func(c *config) { c.o.PageSize = n } }

// WithSkills serves the skills extension (io.modelcontextprotocol/skills,
// declared with directoryRead) with good and bad skill fixtures: see
// package skills, and the fixtures in internal/testserver/skills.go.
func WithSkills() Option { return func(c *config) { c.o.Skills = true } }

// WithoutListChanged makes the server declare no listChanged for tools,
// prompts and resources, as a minimal server does; it still serves the
// lists.
func WithoutListChanged() Option { return func(c *config) { c.o.NoListChanged = true } }

// WithSSEResponses answers every Streamable HTTP request with an event
// stream instead of application/json.
func WithSSEResponses() Option { return func(c *config) { c.o.SSEResponses = true } }

// WithServerInfo sets the name, title and version the server reports, and
// instructions ("" keeps the default text).
func WithServerInfo(info protocol.Implementation, instructions string) Option {
	return func(c *config) {
		c.o.ServerInfo = info
		c.o.Instructions = instructions
	}
}

// WithLogger sends the server's diagnostics to l; the default discards them.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.o.Logger = l } }

// ErrExit is returned by [Server.ServeStdio] when a [FaultExit] fired: a
// stdio server should exit the process at once.
var ErrExit = testserver.ErrExit

// Server is a dual-era MCP server for tests. [NewServer] makes one that
// closes with the test; it is safe for concurrent use.
type Server struct {
	srv    *testserver.Server
	ctx    context.Context // canceled by Close
	cancel context.CancelFunc
	conns  group // in-memory and relayed connections

	mu    sync.Mutex
	hs    *httptest.Server // started by the first URL call; guarded by mu
	relay *relay           // started by the first Command call; guarded by mu
	down  bool             // SetDown; guarded by mu
	// serving: the HTTP listeners SetDown(false) opened again (hs serves
	// on them); Close closes them before hs and waits.
	serving sync.WaitGroup
}

// New returns a server configured by opts, for programs; the caller must
// call [Server.Close]. Tests use [NewServer].
func New(opts ...Option) (*Server, error) {
	var c config
	for _, opt := range opts {
		opt(&c)
	}
	if c.err != nil {
		return nil, c.err
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Server{srv: testserver.New(c.o), ctx: ctx, cancel: cancel}, nil
}

// NewServer returns a server configured by opts that is closed when the
// test and its subtests finish. A bad option (an invalid [Fault]) fails
// the test at once.
func NewServer(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s, err := New(opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Close ends every connection, stream, listen and session, stops the HTTP
// listener and the stdio relay, and waits for the goroutines the server
// started. It is idempotent and returns nil.
func (s *Server) Close() error {
	s.conns.shut()
	s.mu.Lock()
	hs, rl := s.hs, s.relay
	s.mu.Unlock()
	s.cancel()
	if rl != nil {
		rl.close()
	}
	s.srv.Close() // ends long-lived SSE responses before the listener closes
	if hs != nil {
		s.mu.Lock()
		hs.Listener.Close() // the one SetDown(false) opened, if any
		s.mu.Unlock()
		hs.Close()
		s.serving.Wait()
	}
	s.conns.wait()
	return nil
}

// Transport returns an in-memory transport to the server: each Connect
// opens a new connection, served as a stdio connection would be (so stdio
// faults such as [FaultExit] and [FaultNoise] apply).
func (s *Server) Transport() transport.Transport { return memTransport{s} }

type memTransport struct{ s *Server }

// Kind returns transport.KindMemory.
func (memTransport) Kind() string { return transport.KindMemory }

// Connect implements transport.Transport.
func (m memTransport) Connect(ctx context.Context) (transport.Conn, error) {
	if m.s.isDown() {
		return nil, errDown
	}
	p, end := transport.NewPipe()
	if !m.s.serve(end, end) {
		return nil, transport.ErrClosed
	}
	return p.Connect(ctx)
}

// serve serves the stream r, w until it ends or the server closes; it
// reports false when the server is closed.
func (s *Server) serve(r io.ReadCloser, w io.Writer) bool {
	return s.conns.goServe(r, func() { _ = s.srv.ServeStream(s.ctx, r, w) })
}

// ServeStdio serves newline-delimited JSON-RPC read from r and written to
// w (a process's stdin and stdout) until r ends, ctx ends or a [FaultExit]
// fires; then it returns [ErrExit].
func (s *Server) ServeStdio(ctx context.Context, r io.Reader, w io.Writer) error {
	return s.srv.ServeStream(ctx, r, w)
}

// Handler returns the server's HTTP handler: Streamable HTTP (both eras)
// at /mcp and any other path but these two, WebSocket (subprotocol "mcp")
// at /ws and the deprecated HTTP+SSE transport at /sse. It refuses
// requests whose Host or Origin is not a loopback name (DNS-rebinding
// protection). Call [Server.Close] before shutting an http.Server down:
// long-lived event streams end only then.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/ws", s.endable(s.srv.WebSocketHandler()))
	mux.Handle("/sse", s.srv.SSEHandler())
	mux.Handle("/", s.srv.Handler())
	return mux
}

// URL returns the Streamable HTTP endpoint, http://127.0.0.1:PORT/mcp,
// starting the HTTP listener on the first call. The WebSocket and HTTP+SSE
// endpoints are [Server.WebSocketURL] and [Server.SSEURL].
func (s *Server) URL() string { return s.base() + "/mcp" }

// WebSocketURL returns ws://127.0.0.1:PORT/ws (see [Server.URL]).
func (s *Server) WebSocketURL() string { return "ws" + strings.TrimPrefix(s.base(), "http") + "/ws" }

// SSEURL returns the HTTP+SSE endpoint http://127.0.0.1:PORT/sse, to use
// with transport.SSE (see [Server.URL]).
func (s *Server) SSEURL() string { return s.base() + "/sse" }

func (s *Server) base() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hs == nil {
		s.hs = httptest.NewServer(s.Handler()) // 127.0.0.1
	}
	return s.hs.URL
}

// Message is one message the server received.
type Message struct {
	// Transport is "stdio" (also for in-memory connections), "http",
	// "websocket" or "sse".
	Transport string
	// HTTPMethod is POST, GET or DELETE on HTTP; "" elsewhere.
	HTTPMethod string
	// Method is the JSON-RPC method; "" for responses and bodiless HTTP
	// requests.
	Method string
	// ID is the id of a request or response; the zero ID for notifications.
	ID jsonrpc.ID
	// Params is the raw params of a request or notification.
	Params json.RawMessage
	// Raw is the message as received.
	Raw json.RawMessage
	// Header holds the HTTP request headers (HTTP transports only).
	Header http.Header
	// SessionID is the legacy session the message belonged to, if any.
	SessionID string
}

// Meta returns params._meta[key] of the message, or nil.
func (m Message) Meta(key string) json.RawMessage {
	return testserver.Recorded{Params: m.Params}.Meta(key)
}

func message(r testserver.Recorded) Message {
	return Message{
		Transport: r.Transport, HTTPMethod: r.HTTPMethod, Method: r.Method, ID: r.ID,
		Params: r.Params, Raw: r.Raw, Header: r.Headers, SessionID: r.SessionID,
	}
}

// Received returns every message received since the start or the last
// [Server.Reset], in arrival order (at most the last 10000).
func (s *Server) Received() []Message {
	rs := s.srv.Received()
	out := make([]Message, len(rs))
	for i, r := range rs {
		out[i] = message(r)
	}
	return out
}

// Counts returns how many messages of each JSON-RPC method were received;
// responses count under "", bodiless HTTP requests under "GET" and "DELETE".
func (s *Server) Counts() map[string]int {
	n := map[string]int{}
	for _, m := range s.srv.ReceivedMethods() {
		n[m]++
	}
	return n
}

// Count returns how many messages of the JSON-RPC method were received.
func (s *Server) Count(method string) int { return s.Counts()[method] }

// Reset forgets the messages received so far.
func (s *Server) Reset() { s.srv.Reset() }

// WaitReceived waits until a message of the JSON-RPC method (or an HTTP
// "GET" or "DELETE") has been received and returns the first one, or
// ctx.Err().
func (s *Server) WaitReceived(ctx context.Context, method string) (Message, error) {
	r, err := s.srv.WaitReceived(ctx, method)
	return message(r), err
}

// WaitIdle waits until the server is acting on no message (an open listen
// or held request counts as busy), or returns ctx.Err().
func (s *Server) WaitIdle(ctx context.Context) error { return s.srv.WaitIdle(ctx) }

// SetFaults replaces the installed faults; none makes the server behave.
func (s *Server) SetFaults(faults ...Fault) error {
	tfs, err := parseFaults(faults)
	if err != nil {
		return err
	}
	s.srv.SetFaults(tfs...)
	return nil
}

// FaultHits returns how many times each installed fault applied.
func (s *Server) FaultHits() []int { return s.srv.FaultHits() }

// NotifyToolsChanged announces a change of the tool list to every legacy
// session and every modern listen that asked for it.
func (s *Server) NotifyToolsChanged() { s.srv.NotifyToolsChanged() }

// NotifyPromptsChanged announces a change of the prompt list.
func (s *Server) NotifyPromptsChanged() { s.srv.NotifyPromptsChanged() }

// NotifyResourcesChanged announces a change of the resource list.
func (s *Server) NotifyResourcesChanged() { s.srv.NotifyResourcesChanged() }

// NotifyResourceUpdated announces an update of the resource uri to the
// subscribers of it (or of a parent).
func (s *Server) NotifyResourceUpdated(uri string) { s.srv.NotifyResourceUpdated(uri) }

// EndListens ends every modern subscriptions/listen stream gracefully.
func (s *Server) EndListens() { s.srv.EndListens() }

// AbortListens tears every modern listen down without a final result.
func (s *Server) AbortListens() { s.srv.AbortListens() }

// Listens returns the number of open modern listens.
func (s *Server) Listens() int { return s.srv.Listens() }

// Sessions returns the ids of the live legacy HTTP and HTTP+SSE sessions.
func (s *Server) Sessions() []string { return s.srv.Sessions() }

// ExpireSession ends the legacy HTTP session id (later requests with it
// get 404) and reports whether it existed.
func (s *Server) ExpireSession(id string) bool { return s.srv.ExpireSession(id) }
