package testserver

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Era selects which protocol eras a [Server] speaks.
type Era int

// Eras.
const (
	// Dual serves both eras and selects one per request: a modern _meta
	// protocolVersion means modern, initialize opens a legacy session.
	Dual Era = iota
	// ModernOnly serves only 2026-07-28: initialize is an unknown method,
	// GET and DELETE are 405, Mcp-Session-Id is ignored.
	ModernOnly
	// LegacyOnly serves only the initialize era: server/discover is an
	// unknown method and HTTP requests without a session are rejected.
	LegacyOnly
)

// String returns "dual", "modern" or "legacy".
func (e Era) String() string {
	switch e {
	case ModernOnly:
		return "modern"
	case LegacyOnly:
		return "legacy"
	}
	return "dual"
}

// ParseEra parses "dual", "modern" or "legacy".
func ParseEra(s string) (Era, error) {
	switch strings.ToLower(s) {
	case "", "dual":
		return Dual, nil
	case "modern", "modern-only":
		return ModernOnly, nil
	case "legacy", "legacy-only":
		return LegacyOnly, nil
	}
	return Dual, fmt.Errorf("testserver: unknown era %q", s)
}

// Transport names used in [Recorded.Transport].
const (
	TransportStdio     = "stdio"
	TransportHTTP      = "http"
	TransportWebSocket = "websocket"
	TransportSSE       = "sse"
)

// Options configure a [Server]. The zero value is a dual-era server with
// default versions; New copies the options.
type Options struct {
	// Era selects the eras served; the zero value is [Dual].
	Era Era
	// LegacyVersions are the initialize versions, preferred first; nil
	// means 2025-11-25 and 2025-06-18.
	LegacyVersions []string
	// ModernVersions are the per-request versions accepted; nil means
	// 2026-07-28.
	ModernVersions []string
	// ServerInfo names the server; the zero value means
	// {Name: "conduit-testserver", Version: "0.1.0"}.
	ServerInfo protocol.Implementation
	// Instructions are returned by initialize and server/discover; ""
	// means a short default text.
	Instructions string
	// PageSize is the number of items per page of tools/list,
	// prompts/list, resources/list and resources/templates/list; 0 or
	// negative means one page.
	PageSize int
	// TTL is the ttlMs of cacheable modern results (server/discover, the
	// lists, resources/read); 0 sends ttlMs 0; negative omits ttlMs and
	// cacheScope altogether.
	TTL time.Duration
	// CacheScope is the cacheScope of cacheable modern results; "" means
	// "public".
	CacheScope string
	// SSEResponses answers every HTTP request with an event stream; by
	// default a request that produced no notification is answered with
	// application/json.
	SSEResponses bool
	// PrimingEvents starts every legacy SSE stream with a priming event (an
	// event id, empty data) carrying a retry field, as 2025-11-25
	// recommends for resumable streams.
	PrimingEvents bool
	// SSERetry is the retry value of priming events; 0 means 50ms.
	SSERetry time.Duration
	// LenientHeaders accepts modern HTTP requests without Mcp-Method (and
	// without Mcp-Name where one is defined); by default they fail with
	// -32020, as do headers that contradict the body and omitted
	// Mcp-Param-* headers.
	LenientHeaders bool
	// Conformance adds the fixtures the MCP conformance suite's server
	// scenarios call by name (test_simple_text, test://static-text,
	// test_simple_prompt, …) to the tool, prompt and resource lists.
	Conformance bool
	// Skills serves the skills extension (see skills.go) with good and
	// bad skill fixtures, and declares it with directoryRead.
	Skills bool
	// Events serves the events extension (see events.go) in the modern
	// era and declares it; nil serves nothing of it.
	Events *EventsOptions
	// AllowAnyHost turns off the DNS-rebinding protection of the HTTP
	// handlers, which by default answer 403 to a request whose Host or
	// Origin is not localhost, 127.0.0.1 or [::1].
	AllowAnyHost bool
	// NoListChanged declares no listChanged for tools, prompts and
	// resources, as a minimal server does (it still serves the lists).
	NoListChanged bool
	// Faults are installed at start; see [Server.SetFaults].
	Faults []Fault
	// Banner lines are written to the stream before anything else by
	// [Server.ServeStream] (stdout noise before the first message).
	Banner []string
	// MaxMessageSize bounds one incoming message in bytes; 0 means 8 MiB.
	MaxMessageSize int
	// MaxRecords bounds the messages kept for [Server.Received] (the oldest
	// are dropped first); 0 means 10000, negative turns recording off.
	MaxRecords int
	// Logger receives the server's diagnostics; nil discards them.
	Logger *slog.Logger
}

// Recorded is one message the server received.
type Recorded struct {
	// Transport is one of the Transport* constants.
	Transport string
	// HTTPMethod is POST, GET or DELETE on HTTP transports; "" elsewhere.
	HTTPMethod string
	// Method is the JSON-RPC method; "" for responses and for GET/DELETE
	// requests and undecodable bodies.
	Method string
	// ID is the request (or response) id; the zero ID for notifications.
	ID jsonrpc.ID
	// Params is the raw params of a request or notification.
	Params json.RawMessage
	// Raw is the whole message as received.
	Raw json.RawMessage
	// Headers are the HTTP request headers (HTTP transports only).
	Headers http.Header
	// SessionID is the legacy session the message belonged to, if any.
	SessionID string
	// At is when the server recorded the message.
	At time.Time
}

// Meta returns the value of params._meta[key], or nil.
func (r Recorded) Meta(key string) json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return nil
	}
	return p.Meta[key]
}

// ErrExit is returned by [Server.ServeStream] when a [FaultExit] fired: a
// stdio server should exit the process at once.
var ErrExit = errors.New("testserver: exit fault")

// Server is a dual-era MCP test server. Create it with [New]; it is safe for
// concurrent use.
type Server struct {
	opts   Options         // written once by New
	logger *slog.Logger    // written once by New
	key    []byte          // requestState HMAC key, written once by New
	done   chan struct{}   // closed by Close
	base   context.Context // canceled by Close; parent of session contexts
	cancel context.CancelFunc
	wg     sync.WaitGroup // goroutines the server started (dispatches, tasks)

	mu        sync.Mutex
	closed    bool                // guarded by mu
	faults    []*faultState       // guarded by mu
	received  []Recorded          // guarded by mu
	recvCh    chan struct{}       // guarded by mu; closed and replaced on every record
	active    int                 // messages and requests being handled; guarded by mu
	idleCh    chan struct{}       // guarded by mu; closed and replaced when active drops to 0
	sessions  map[string]*session // HTTP/SSE sessions by id; guarded by mu
	conns     map[*session]bool   // every live legacy session (all transports); guarded by mu
	listens   map[*listen]bool    // active modern listens; guarded by mu
	tasks     map[string]*task    // guarded by mu
	nextID    int64               // id counter for sessions, tasks, streams; guarded by mu
	discovers int                 // server/discover requests seen; guarded by mu
	runs      map[string]int      // tool runs by name (Executions); guarded by mu

	in inputState  // the input tools' state (input.go); its own mutex
	ev eventsState // the events extension's state (events.go); its own mutex
}

// New returns a server configured by opts.
func New(opts Options) *Server {
	o := opts
	if len(o.LegacyVersions) == 0 {
		o.LegacyVersions = []string{protocol.Version20251125, protocol.Version20250618}
	}
	if len(o.ModernVersions) == 0 {
		o.ModernVersions = []string{protocol.Version20260728}
	}
	o.LegacyVersions = slices.Clone(o.LegacyVersions)
	o.ModernVersions = slices.Clone(o.ModernVersions)
	if o.ServerInfo.Name == "" {
		o.ServerInfo = protocol.Implementation{Name: "conduit-testserver", Version: "0.1.0"}
	}
	if o.Instructions == "" {
		o.Instructions = "Conduit test server: echo, add, slow, big and friends."
	}
	if o.CacheScope == "" {
		o.CacheScope = protocol.CacheScopePublic
	}
	if o.SSERetry <= 0 {
		o.SSERetry = 50 * time.Millisecond
	}
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = 8 << 20
	}
	if o.MaxRecords == 0 {
		o.MaxRecords = 10000
	}
	o.Banner = slices.Clone(o.Banner)
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	base, cancel := context.WithCancel(context.Background())
	s := &Server{
		base:     base,
		cancel:   cancel,
		opts:     o,
		logger:   logger,
		key:      key,
		done:     make(chan struct{}),
		sessions: make(map[string]*session),
		conns:    make(map[*session]bool),
		listens:  make(map[*listen]bool),
		tasks:    make(map[string]*task),
		recvCh:   make(chan struct{}),
		idleCh:   make(chan struct{}),
	}
	s.SetFaults(o.Faults...)
	o.Faults = nil
	return s
}

// Close ends every listen, held request, SSE stream and session, and waits
// for the goroutines the server started. It is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		close(s.done)
		s.cancel()
	}
	sessions := make([]*session, 0, len(s.conns))
	for ss := range s.conns {
		sessions = append(sessions, ss)
	}
	s.mu.Unlock()
	for _, ss := range sessions {
		ss.end()
	}
	s.wg.Wait()
	return nil
}

// Received returns a copy of every message received since New or the last
// [Server.Reset], in arrival order.
func (s *Server) Received() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.received)
}

// ReceivedMethods returns the JSON-RPC methods of [Server.Received], with
// "" for responses and non-POST HTTP requests shown as "GET"/"DELETE".
func (s *Server) ReceivedMethods() []string {
	var out []string
	for _, r := range s.Received() {
		switch {
		case r.Method != "":
			out = append(out, r.Method)
		case r.HTTPMethod != "" && r.HTTPMethod != http.MethodPost:
			out = append(out, r.HTTPMethod)
		default:
			out = append(out, "")
		}
	}
	return out
}

// Reset clears the record of received messages and the tool runs. The installed faults keep
// their hit counters; [Server.SetFaults] installs fresh ones.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.received = nil
	s.runs = nil
}

// enter marks the start of handling a message or request; every enter is
// paired with a leave. Overlapping pairs (a message handing its request to
// a goroutine) keep the server busy in between.
func (s *Server) enter() {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
}

func (s *Server) leave() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.active--
	if s.active == 0 {
		close(s.idleCh)
		s.idleCh = make(chan struct{})
	}
}

// WaitIdle blocks until the server is handling no message or request on
// any transport (an open listen or a held request counts as busy), or ctx
// ends. Together with [Server.WaitReceived] it lets a test wait until the
// server has acted on a message, for example a cancellation.
func (s *Server) WaitIdle(ctx context.Context) error {
	for {
		s.mu.Lock()
		if s.active == 0 {
			s.mu.Unlock()
			return nil
		}
		ch := s.idleCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Sessions returns the ids of the live legacy HTTP and SSE sessions.
func (s *Server) Sessions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ExpireSession ends the legacy HTTP session id: later requests carrying it
// get 404. It reports whether the session existed.
func (s *Server) ExpireSession(id string) bool {
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		return false
	}
	s.dropSession(ss)
	return true
}

// Listens returns the number of active modern subscriptions/listen streams.
func (s *Server) Listens() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listens)
}

func (s *Server) record(r Recorded) {
	r.At = time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.opts.MaxRecords < 0 {
		return
	}
	if len(s.received) >= s.opts.MaxRecords {
		s.received = slices.Delete(s.received, 0, len(s.received)-s.opts.MaxRecords+1)
	}
	s.received = append(s.received, r)
	close(s.recvCh)
	s.recvCh = make(chan struct{})
}

// WaitReceived blocks until a message with JSON-RPC method (or, for "GET"
// and "DELETE", an HTTP request of that method) has been received since New
// or the last [Server.Reset] (never, with recording off), and returns the
// first such record. It returns ctx.Err() if ctx ends first.
func (s *Server) WaitReceived(ctx context.Context, method string) (Recorded, error) {
	for {
		s.mu.Lock()
		for _, r := range s.received {
			if r.Method == method || r.Method == "" && r.HTTPMethod == method {
				s.mu.Unlock()
				return r, nil
			}
		}
		ch := s.recvCh
		s.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return Recorded{}, ctx.Err()
		}
	}
}

func (s *Server) newID(prefix string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextID++
	return fmt.Sprintf("%s%d", prefix, s.nextID)
}

// goTracked runs f on a goroutine counted by s.wg, unless the server is
// closed. It reports whether f was started.
func (s *Server) goTracked(f func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f()
	}()
	return true
}

// serverCtx returns a context canceled when ctx ends or the server closes.
func (s *Server) serverCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.base, cancel)
	return ctx, func() { stop(); cancel() }
}
