package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/protocol"
)

// Options configure a [Host]. The zero value (or nil) works.
type Options struct {
	// Server returns the options of one server; Start calls it once per
	// server. Nil gives every server the zero [ServerOptions].
	Server func(sc ServerConfig) ServerOptions
	// Name makes the catalogue name of a tool, prompt or resource of a
	// server; nil means server + "__" + name. The result is sanitized to
	// what LLM function-calling APIs accept (letters, digits, "_" and
	// "-", at most 64 bytes, not starting with a digit or "-") and made
	// unique (see [Host.Tools]).
	Name func(server, name string) string
	// Reconnect paces reconnection of a server that failed or died.
	Reconnect Reconnect
	// MaxStarting caps the stdio servers starting at once: a server holds
	// one of these slots from the start of its process until its
	// handshake and first listing end (or it fails), that is while it is
	// in [StateConnecting], and waits for one in [StateQueued], in
	// the order the servers asked (their first starts in the order of
	// their names). Its ConnectTimeout counts from when it
	// has a slot. Reconnections, and the client's own restart of a
	// process that died, take a slot too. 0 means twice the number of
	// CPUs, at least 4; negative means no cap (every server starts at
	// once). HTTP, SSE and WebSocket servers, which start nothing here,
	// are not capped.
	MaxStarting int
	// ListTimeout bounds one refresh of a server's catalogue; 0 means
	// [DefaultListTimeout].
	ListTimeout time.Duration
	// Logger receives the host's diagnostics and is passed to every
	// client and transport; nil discards them.
	Logger *slog.Logger
}

// Reconnect paces reconnection with exponential backoff (with jitter).
// The zero value reconnects forever, from [DefaultInitialBackoff] up to
// [DefaultMaxBackoff] between attempts.
type Reconnect struct {
	// Disabled leaves a failed or dead server failed.
	Disabled bool
	// InitialInterval is the first wait; 0 means DefaultInitialBackoff.
	InitialInterval time.Duration
	// MaxInterval caps each wait; 0 means DefaultMaxBackoff.
	MaxInterval time.Duration
}

// State is the state of one server of a [Host].
type State int

// The server states.
const (
	// StateConnecting: a connection attempt is running (the first one, or
	// a reconnection), up to its first listing; a stdio server holds a
	// start slot meanwhile. Next: StateReady or StateFailed.
	StateConnecting State = iota
	// StateReady: connected; its tools, prompts and resources are in the
	// catalogue. Next: StateFailed when the connection ends.
	StateReady
	// StateFailed: the last attempt failed or the connection ended (see
	// ServerStatus.Err); its entries are out of the catalogue (a call of
	// one is a [*ServerError]). Next: StateQueued (a stdio server) or
	// StateConnecting after a backoff, unless Reconnect.Disabled.
	StateFailed
	// StateDisabled: the file marks the server disabled; never started.
	StateDisabled
	// StateClosed: the host was closed.
	StateClosed
	// StateQueued: a stdio server waits for a start slot
	// ([Options.MaxStarting]), before its first start or a
	// reconnection. Next: StateConnecting.
	StateQueued
)

// String returns "connecting", "ready", "failed", "disabled", "closed" or
// "queued".
func (s State) String() string {
	switch s {
	case StateConnecting:
		return "connecting"
	case StateReady:
		return "ready"
	case StateFailed:
		return "failed"
	case StateDisabled:
		return "disabled"
	case StateClosed:
		return "closed"
	case StateQueued:
		return "queued"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// ServerStatus is a snapshot of one server.
type ServerStatus struct {
	Name  string
	Type  string // TypeStdio, TypeHTTP, TypeSSE or TypeWebSocket
	State State
	// Since is when the server entered State.
	Since time.Time
	// Err is what is wrong now: why the last connection attempt failed
	// or the connection ended (StateFailed, and StateConnecting while
	// reconnecting), or why the last catalogue refresh failed
	// (StateReady). Nil when the server is healthy.
	Err error
	// LastErr is the most recent error of any kind, kept after the
	// server recovered; nil if it never failed.
	LastErr error
	// Attempts counts connection attempts; Connects the successful ones.
	Attempts, Connects int
	// Heals counts the connections the client restored on its own while
	// ready (a stdio process that crashed and was started again, an HTTP
	// session established again), each counted once its session answered
	// again and its catalogue was listed again; the host's own
	// reconnections are in Connects.
	Heals int
	// Tools, Prompts and Resources count the server's catalogue entries.
	Tools, Prompts, Resources int
}

// Sentinels of the host's errors.
var (
	// ErrNotFound is returned (wrapped) for a name that is not in the
	// catalogue, or a server that is not in the configuration.
	ErrNotFound = errors.New("host: not found")
	// ErrNotReady is matched by the [*ServerError] of a call to a server
	// that is not connected.
	ErrNotReady = errors.New("host: server is not connected")
	// ErrClosed is returned by calls on a closed Host.
	ErrClosed = errors.New("host: closed")
)

// ServerError reports a call to a server that is not connected. It
// matches [ErrNotReady]; Err is the server's current error, else its last
// one (nil for a server that has not failed yet).
type ServerError struct {
	Server string
	State  State
	Err    error
}

// Error returns "host: server "NAME" is not connected (STATE): ERR".
func (e *ServerError) Error() string {
	s := fmt.Sprintf("host: server %q is not connected (%s)", e.Server, e.State)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Is reports whether target is [ErrNotReady].
func (e *ServerError) Is(target error) bool { return target == ErrNotReady }

// Unwrap returns Err.
func (e *ServerError) Unwrap() error { return e.Err }

// Host runs every server of a configuration: it connects them
// concurrently, keeps one catalogue of their tools, prompts and
// resources, routes calls by catalogue name and reconnects servers that
// fail. Its methods are safe for concurrent use.
type Host struct {
	opts    Options
	servers []*server // sorted by name; written once in Start
	starts  *gate     // caps stdio servers starting at once; nil: no cap

	// life is the host's lifetime context, detached from any caller and
	// canceled by Close; every supervisor goroutine derives from it.
	life   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // one per supervisor goroutine

	mu      sync.Mutex    // guards cat and changed
	cat     catalogue     // rebuilt on every change
	changed chan struct{} // closed (and replaced) on every change

	closeOnce sync.Once
	closeErr  error // written once in Close
}

// Start starts every enabled server of cfg, each on its own goroutine,
// and returns at once; [Host.Wait] waits for the first attempts. cfg must
// not be nil; opts may be. The Host must be closed.
//
// Errors: a [*ConfigError] for a Config that [Parse] would reject (an
// empty or duplicate name, an unknown type, neither command nor url), or
// [ConfigErrors] for several.
func Start(cfg *Config, opts *Options) (*Host, error) {
	h := &Host{changed: make(chan struct{})}
	if opts != nil {
		h.opts = *opts
	}
	h.starts = newGate(h.opts.MaxStarting)
	seen := map[string]bool{}
	var errs ConfigErrors
	for _, sc := range cfg.Servers {
		sc, err := checkServer(cfg.Path, sc, seen)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		var so ServerOptions
		if h.opts.Server != nil {
			so = h.opts.Server(sc)
		}
		h.servers = append(h.servers, newServer(h, sc, so))
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	slices.SortFunc(h.servers, func(a, b *server) int { return strings.Compare(a.cfg.Name, b.cfg.Name) })
	h.life, h.cancel = context.WithCancel(context.Background())
	for _, s := range h.servers {
		if s.cfg.Disabled {
			close(s.settled)
			continue
		}
		if s.starts != nil {
			s.place = s.starts.ask() // first starts in the order of the names
		}
		h.wg.Add(1)
		go s.run()
	}
	return h, nil
}

// checkServer checks sc as Parse would and returns a copy with its type
// resolved and its slices and maps copied (the caller's stay its own).
func checkServer(path string, sc ServerConfig, seen map[string]bool) (ServerConfig, *ConfigError) {
	fail := func(field string, err error) (ServerConfig, *ConfigError) {
		return sc, &ConfigError{File: path, Server: sc.Name, Field: field, Err: err}
	}
	switch {
	case sc.Name == "":
		return fail("", errors.New("a server has an empty name"))
	case seen[sc.Name]:
		return fail("", errors.New("duplicate server name"))
	}
	seen[sc.Name] = true
	sc.Args, sc.Env, sc.Header = slices.Clone(sc.Args), maps.Clone(sc.Env), sc.Header.Clone()
	if field, err := sc.resolveType(sc.Type); err != nil {
		return fail(field, err)
	}
	return sc, nil
}

// Wait waits until every server has finished its first connection
// attempt (ready or failed; each bounded by its ConnectTimeout from when
// it got a start slot, see [Options.MaxStarting]), or ctx ends (then it
// returns ctx.Err()). [Host.Changed] tells of each server as it comes up.
func (h *Host) Wait(ctx context.Context) error {
	for _, s := range h.servers {
		select {
		case <-s.settled:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Servers returns the status of every server, sorted by name.
func (h *Host) Servers() []ServerStatus {
	out := make([]ServerStatus, 0, len(h.servers))
	for _, s := range h.servers {
		out = append(out, h.status(s))
	}
	return out
}

// Server returns the status of the server called name.
func (h *Host) Server(name string) (ServerStatus, bool) {
	s := h.server(name)
	if s == nil {
		return ServerStatus{}, false
	}
	return h.status(s), true
}

func (h *Host) status(s *server) ServerStatus {
	st := s.snapshot()
	h.mu.Lock()
	st.Tools, st.Prompts, st.Resources = len(s.tools), len(s.prompts), len(s.resources)
	h.mu.Unlock()
	return st
}

func (h *Host) server(name string) *server {
	for _, s := range h.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

// Client returns the connected client of the server called name, for
// what the host does not route (completions, subscriptions, tasks…). It
// stays valid until the connection ends (see its Done).
//
// Errors: [ErrNotFound] (wrapped) for an unknown server, a
// [*ServerError] matching [ErrNotReady] when it is not connected,
// [ErrClosed].
func (h *Host) Client(name string) (*client.Client, error) {
	s := h.server(name)
	if s == nil {
		return nil, fmt.Errorf("server %q: %w", name, ErrNotFound)
	}
	return s.readyClient()
}

// Changed returns a channel that is closed at the next change of the
// catalogue or of a server's state.
func (h *Host) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// notifyLocked wakes the waiters of Changed.
func (h *Host) notifyLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

func (h *Host) notify() {
	h.mu.Lock()
	h.notifyLocked()
	h.mu.Unlock()
}

// CallTool calls the tool with catalogue name name on its server.
//
// Errors: a [*ServerError] matching [ErrNotReady] (the server's error
// inside) when the tool's server is not connected: a name the server
// listed before its connection ended, or, with the default names, a
// SERVER__… name of a server that never connected; [ErrNotFound]
// (wrapped) for a name no server has; [ErrClosed]; else those of
// client.Client.CallTool.
func (h *Host) CallTool(ctx context.Context, name string, args any, opts ...client.CallOption) (*protocol.CallToolResult, error) {
	t, ok := h.Tool(name)
	if !ok {
		return nil, h.absent("tool", name)
	}
	c, err := h.server(t.Server).readyClient()
	if err != nil {
		return nil, err
	}
	return c.CallTool(ctx, t.Tool.Name, args, opts...)
}

// GetPrompt renders the prompt with catalogue name name on its server.
// Errors are those of [Host.CallTool], then of client.Client.GetPrompt.
func (h *Host) GetPrompt(ctx context.Context, name string, args map[string]string, opts ...client.CallOption) (*protocol.GetPromptResult, error) {
	p, ok := h.Prompt(name)
	if !ok {
		return nil, h.absent("prompt", name)
	}
	c, err := h.server(p.Server).readyClient()
	if err != nil {
		return nil, err
	}
	return c.GetPrompt(ctx, p.Prompt.Name, args, opts...)
}

// ReadResource reads uri from the server called server (uri need not be
// listed: templates expand to URIs no listing names). Errors are those of
// [Host.Client], then of client.Client.ReadResource.
func (h *Host) ReadResource(ctx context.Context, server, uri string) (*protocol.ReadResourceResult, error) {
	c, err := h.Client(server)
	if err != nil {
		return nil, err
	}
	return c.ReadResource(ctx, uri)
}

// Close stops every server concurrently (each client closed, each stdio
// process ended) and waits for them, bounded by [CloseTimeout]. It is
// idempotent; later calls return the first call's result.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		h.cancel()
		done := make(chan struct{})
		go func() { h.wg.Wait(); close(done) }()
		t := time.NewTimer(CloseTimeout)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			h.closeErr = fmt.Errorf("host: servers still stopping after %v", CloseTimeout)
		}
		h.notify()
	})
	return h.closeErr
}
