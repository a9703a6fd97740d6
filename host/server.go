package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// stableUptime is how long a connection must last for the reconnection
// backoff to start again from its initial interval.
const stableUptime = 5 * time.Second

// endProbeTimeout bounds the call that reads why a connection ended.
const endProbeTimeout = time.Second

// refreshInterval is the least time between the starts of two catalogue
// refreshes of one server. A server may announce changes without pause,
// or in every answer to the listing itself: each refresh is a listing
// and a rebuild of the whole catalogue. Changes announced meanwhile are
// listed together when it has passed.
const refreshInterval = 100 * time.Millisecond

// server is one configured server and its supervisor goroutine.
type server struct {
	h    *Host
	cfg  ServerConfig
	opts ServerOptions
	tr   *watchedTransport // nil for a WebSocket server with Auth (dialed)
	// starts is the host's start gate for a stdio server, nil otherwise.
	starts *gate
	// place is the server's place in the gate's line for its first
	// start, taken by Start in the order of the servers' names; nil once
	// used.
	place chan struct{}

	refresh chan struct{} // 1-buffered: a list change or a reconnect asks for a refresh
	pending atomic.Uint32 // the kinds to refresh, set by poke, taken by watch
	// listErrs are the last listing errors of tools, prompts and
	// resources; owned by the supervisor goroutine.
	listErrs [3]error
	settled  chan struct{} // closed when the first attempt has ended

	mu       sync.Mutex // guards the fields below
	state    State
	since    time.Time      // when state was entered
	err      error          // the current problem, nil when healthy
	lastErr  error          // the most recent error, kept after recovery
	c        *client.Client // the connected client, from its first listing until its end; nil otherwise
	attempts int
	connects int
	heals    int

	// The server's catalogue entries; guarded by h.mu.
	tools     []protocol.Tool
	prompts   []protocol.Prompt
	resources []protocol.Resource
	// The catalogue names of its tools and prompts when its connection
	// last ended; nil once it lists again. Guarded by h.mu.
	goneTools, gonePrompts []string
	// What its entries claimed when its connection last ended (see
	// Host.rebuildLocked); kept until it lists again. Guarded by h.mu.
	claims *claims
}

func newServer(h *Host, sc ServerConfig, so ServerOptions) *server {
	s := &server{h: h, cfg: sc, opts: so, refresh: make(chan struct{}, 1), settled: make(chan struct{}), since: time.Now()}
	if sc.Disabled {
		s.state = StateDisabled
	}
	if t := newTransport(sc, &so, h.opts.Logger); t != nil {
		s.tr = &watchedTransport{Transport: t, s: s}
	}
	if sc.Type == TypeStdio && h.starts != nil {
		s.starts = h.starts
		if !sc.Disabled {
			s.state = StateQueued // until it has a start slot
		}
	}
	return s
}

// poke asks the supervisor for a catalogue refresh; it never blocks (it
// runs on the client's dispatcher goroutine).
func (s *server) poke(k kinds) {
	s.pending.Or(uint32(k))
	select {
	case s.refresh <- struct{}{}:
	default:
	}
}

func (s *server) snapshot() ServerStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return ServerStatus{Name: s.cfg.Name, Type: s.cfg.Type, State: s.state, Since: s.since,
		Err: s.err, LastErr: s.lastErr, Attempts: s.attempts, Connects: s.connects, Heals: s.heals}
}

// set is the one place that changes the state (and its error).
func (s *server) set(state State, c *client.Client, err error) {
	s.mu.Lock()
	s.setErrLocked(err)
	if s.state != state {
		s.since = time.Now()
	}
	s.state, s.c = state, c
	switch state {
	case StateReady:
		s.connects++
	case StateConnecting:
		s.attempts++
	}
	s.mu.Unlock()
	s.h.notify()
}

func (s *server) setErrLocked(err error) {
	s.err = err
	if err != nil {
		s.lastErr = err
	}
}

func (s *server) readyClient() (*client.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state == StateClosed:
		return nil, ErrClosed
	case s.c == nil:
		err := s.err
		if err == nil {
			err = s.lastErr
		}
		return nil, &ServerError{Server: s.cfg.Name, State: s.state, Err: err}
	}
	return s.c, nil
}

// run is the supervisor: it connects, refreshes the catalogue on list
// changes and reconnects, and reconnects with backoff after a failure,
// until the host closes. It owns the server's client.
func (s *server) run() {
	defer s.h.wg.Done()
	b := s.backoff()
	first := true
	settle := func() {
		if first {
			first = false
			close(s.settled)
		}
	}
	defer settle()
	for {
		c, err := s.connect()
		if err == nil {
			start := time.Now()
			// List before reporting ready, so that a ready server's entries
			// are in the catalogue; calls may use c as soon as they are.
			s.mu.Lock()
			s.c = c
			s.mu.Unlock()
			s.pending.Store(0)
			s.listErrs = [3]error{}
			s.refreshCatalogue(c, kindAll)
			s.set(StateReady, c, errors.Join(s.listErrs[:]...))
			s.releaseAttempt()
			settle()
			err = s.watch(c)
			// Retire the client before the (bounded, possibly slow) Close,
			// so that calls fail at once with ErrNotReady meanwhile.
			s.mu.Lock()
			s.c = nil
			s.mu.Unlock()
			s.h.drop(s)
			c.Close()
			s.tr.endHeal() // Close joined any heal: no Connect can take a slot now
			if time.Since(start) >= stableUptime {
				b.Reset()
			}
		}
		if s.h.life.Err() != nil {
			s.set(StateClosed, nil, nil)
			return
		}
		s.set(StateFailed, nil, err)
		settle()
		if !s.sleep(b) {
			s.set(StateClosed, nil, err)
			return
		}
	}
}

func (s *server) backoff() *backoff.ExponentialBackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = DefaultInitialBackoff
	b.MaxInterval = DefaultMaxBackoff
	if r := s.h.opts.Reconnect; r.InitialInterval > 0 {
		b.InitialInterval = r.InitialInterval
	}
	if r := s.h.opts.Reconnect; r.MaxInterval > 0 {
		b.MaxInterval = r.MaxInterval
	}
	b.Reset()
	return b
}

// sleep waits out the next backoff interval (forever when reconnection
// is disabled); false when the host closed meanwhile.
func (s *server) sleep(b *backoff.ExponentialBackOff) bool {
	var wake <-chan time.Time
	if !s.h.opts.Reconnect.Disabled {
		t := time.NewTimer(b.NextBackOff())
		defer t.Stop()
		wake = t.C
	}
	select {
	case <-wake:
		return true
	case <-s.h.life.Done():
		return false
	}
}

// connect makes one connection attempt: it waits for a start slot (a
// stdio server), then connects, bounded by ConnectTimeout counted from
// then. On success the slot is still held: the caller releases it once
// the first listing is done (releaseAttempt), unless a heal took it over
// meanwhile.
func (s *server) connect() (*client.Client, error) {
	s.mu.Lock()
	prev := s.err // kept while reconnecting: why the last attempt failed
	s.mu.Unlock()
	if s.starts != nil {
		s.set(StateQueued, nil, prev)
		place := s.place
		if place == nil {
			place = s.starts.ask()
		}
		s.place = nil
		if err := s.starts.wait(s.h.life, place); err != nil {
			return nil, err // the host closed
		}
		s.tr.attempt.Store(true)
	}
	c, err := s.dial(prev)
	if err != nil {
		s.releaseAttempt()
	}
	return c, err
}

// releaseAttempt frees the start slot connect took, unless a heal took it
// over (then confirmHeal or endHeal frees it).
func (s *server) releaseAttempt() {
	if s.starts != nil && s.tr.attempt.Swap(false) {
		s.starts.release()
	}
}

// dial connects, bounded by ConnectTimeout from now.
func (s *server) dial(prev error) (*client.Client, error) {
	s.set(StateConnecting, nil, prev)
	ctx := s.h.life
	timeout := s.opts.connectTimeout()
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	h := newListener(s, s.opts.Handler)
	opts := clientOptions(s.cfg, &s.opts, h, s.h.opts.Logger)
	var c *client.Client
	var err error
	if s.tr == nil {
		c, err = client.Dial(ctx, wsURL(s.cfg.URL), opts...)
	} else {
		// The transport's connects during client.Connect (the first, a
		// re-probe) are under this attempt's slot; later ones are heals.
		s.tr.starting.Store(true)
		c, err = client.Connect(ctx, s.tr, opts...)
		s.tr.starting.Store(false)
	}
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && s.h.life.Err() == nil {
		return nil, fmt.Errorf("no answer within %v: %w", timeout, err)
	}
	return c, err
}

// wsURL gives an http(s) URL of a WebSocket server the ws(s) scheme,
// which is how client.Dial picks the WebSocket transport.
func wsURL(u string) string {
	switch scheme, rest, _ := strings.Cut(u, "://"); strings.ToLower(scheme) {
	case "http":
		return "ws://" + rest
	case "https":
		return "wss://" + rest
	}
	return u
}

// watch refreshes the catalogue on request, at most once per
// refreshInterval, until the connection ends (returning why) or the host
// closes (returning nil).
func (s *server) watch(c *client.Client) error {
	var last time.Time // when the last refresh started
	for {
		select {
		case <-c.Done():
			return s.endError(c)
		case <-s.refresh:
			if wait := refreshInterval - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-t.C:
				case <-c.Done():
					t.Stop()
					return s.endError(c)
				case <-s.h.life.Done():
					t.Stop()
					return nil
				}
			}
			last = time.Now()
			healed := s.confirmHeal(c)
			s.refreshCatalogue(c, kinds(s.pending.Swap(0)))
			if healed {
				s.mu.Lock()
				s.heals++
				s.mu.Unlock()
				s.h.notify()
			}
		case <-s.h.life.Done():
			return nil
		}
	}
}

// confirmHeal waits (bounded) for a heal that the transport reported to
// end, then frees its start slot; it reports whether a heal ended with
// the session answering again. It runs on the supervisor goroutine.
func (s *server) confirmHeal(c *client.Client) bool {
	if s.tr == nil || !s.tr.healing.Swap(false) {
		return false
	}
	timeout := s.opts.connectTimeout()
	if timeout <= 0 {
		timeout = DefaultConnectTimeout
	}
	ctx, cancel := context.WithTimeout(s.h.life, timeout)
	err := c.Ping(ctx) // waits until the heal's handshake is done
	cancel()
	s.tr.endHeal()
	return err == nil // else the session failed: watch sees c.Done
}

// endError says why c's connection ended: the error a call now returns,
// or the transport's last failure to reconnect.
func (s *server) endError(c *client.Client) error {
	ctx, cancel := context.WithTimeout(s.h.life, endProbeTimeout)
	defer cancel()
	err := c.Ping(ctx)
	if last := s.tr.lastError(); last != nil && (err == nil || errors.Is(err, client.ErrClosed)) {
		err = last
	}
	if err == nil {
		err = errors.New("the server closed the connection")
	}
	return fmt.Errorf("connection ended: %w", err)
}

// kinds is a set of catalogue kinds to refresh.
type kinds uint32

const (
	kindTools kinds = 1 << iota
	kindPrompts
	kindResources
	kindAll = kindTools | kindPrompts | kindResources
)

// refreshCatalogue lists the kinds k of what the server advertises and
// publishes them. A listing that fails keeps that kind's previous
// entries, and its error is part of the server's Err until that kind is
// listed again.
func (s *server) refreshCatalogue(c *client.Client, k kinds) {
	timeout := s.h.opts.ListTimeout
	if timeout <= 0 {
		timeout = DefaultListTimeout
	}
	ctx, cancel := context.WithTimeout(s.h.life, timeout)
	defer cancel()
	caps := c.ServerCapabilities()
	s.h.mu.Lock()
	tools, prompts, resources := s.tools, s.prompts, s.resources
	s.h.mu.Unlock()
	if k&kindTools != 0 {
		tools = refreshKind(s, 0, "tools", caps.Tools != nil, tools, c.Tools(ctx))
	}
	if k&kindPrompts != 0 {
		prompts = refreshKind(s, 1, "prompts", caps.Prompts != nil, prompts, c.Prompts(ctx))
	}
	if k&kindResources != 0 {
		resources = refreshKind(s, 2, "resources", caps.Resources != nil, resources, c.Resources(ctx))
	}
	s.mu.Lock()
	s.setErrLocked(errors.Join(s.listErrs[:]...))
	s.mu.Unlock()
	s.h.publish(s, tools, prompts, resources)
}

// refreshKind lists one kind (none when not advertised), recording its
// error in slot i of listErrs; on error it keeps old.
func refreshKind[T any](s *server, i int, what string, advertised bool, old []T, seq func(func(T, error) bool)) []T {
	var v []T
	var err error
	if advertised {
		v, err = collect(seq)
	}
	if err != nil {
		s.listErrs[i] = fmt.Errorf("listing %s: %w", what, err)
		return old
	}
	s.listErrs[i] = nil
	return v
}

func collect[T any](seq func(func(T, error) bool)) ([]T, error) {
	var out []T
	for v, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// watchedTransport tells the supervisor when the session reconnected
// (every Connect after client.Connect returned is a heal: a respawned
// process or a new HTTP connection), so that the catalogue is refreshed and the heal
// counted, keeps the last connection error, and takes a start slot for a
// heal of a stdio server (held until confirmHeal or endHeal): the slot of
// the attempt when the heal comes before that attempt's first listing
// ended, else one from the gate.
type watchedTransport struct {
	transport.Transport
	s        *server
	starting atomic.Bool // client.Connect runs: its connects are under the attempt's slot
	healing  atomic.Bool // a heal connected; confirmHeal has not seen it yet
	slot     atomic.Bool // a heal holds a start slot
	// attempt is set while the supervisor's attempt holds a start slot,
	// from connect until its first listing ended; a heal meanwhile takes
	// the slot over (the supervisor would free it only after the listing,
	// which waits for the heal).
	attempt atomic.Bool
	last    atomic.Pointer[error]
}

func (w *watchedTransport) Connect(ctx context.Context) (transport.Conn, error) {
	heal := !w.starting.Load()
	if heal && w.s.starts != nil {
		// A heal before this one that never answered gives its slot back
		// first: this one queues anew, and never waits for itself.
		w.endHeal()
		if !w.attempt.Swap(false) {
			if err := w.s.starts.acquire(ctx); err != nil {
				w.last.Store(&err)
				return nil, err
			}
		}
		w.slot.Store(true)
	}
	conn, err := w.Transport.Connect(ctx)
	if err != nil {
		w.endHeal()
		w.last.Store(&err)
		return nil, err
	}
	w.last.Store(nil)
	if heal {
		w.healing.Store(true)
		w.s.poke(kindAll)
	}
	return conn, nil
}

// endHeal frees the start slot of a heal, if one is held.
func (w *watchedTransport) endHeal() {
	if w != nil && w.slot.Swap(false) {
		w.s.starts.release()
	}
}

func (w *watchedTransport) lastError() error {
	if w == nil {
		return nil
	}
	if p := w.last.Load(); p != nil {
		return *p
	}
	return nil
}

// listener is the handler the host gives each client: it hears the list
// changes (and passes them on to the user's handler) and unwraps to the
// user's handler, so that the client finds the user's other interfaces
// and advertises exactly the capabilities they imply.
type listener struct {
	s    *server
	next any
	user handler.Set // what next implements, detected once
}

func newListener(s *server, next any) *listener {
	return &listener{s: s, next: next, user: handler.Detect(next)}
}

// Unwrap returns the user's handler.
func (l *listener) Unwrap() any { return l.next }

func (l *listener) OnToolsChanged(ctx context.Context) {
	l.s.poke(kindTools)
	if l.user.ToolsChanged != nil {
		l.user.ToolsChanged.OnToolsChanged(ctx)
	}
}

func (l *listener) OnPromptsChanged(ctx context.Context) {
	l.s.poke(kindPrompts)
	if l.user.PromptsChanged != nil {
		l.user.PromptsChanged.OnPromptsChanged(ctx)
	}
}

func (l *listener) OnResourcesChanged(ctx context.Context) {
	l.s.poke(kindResources)
	if l.user.ResourcesChanged != nil {
		l.user.ResourcesChanged.OnResourcesChanged(ctx)
	}
}

var (
	_ handler.ToolsChangedListener     = (*listener)(nil)
	_ handler.PromptsChangedListener   = (*listener)(nil)
	_ handler.ResourcesChangedListener = (*listener)(nil)
)
