package client

import (
	"context"
	"encoding/json"
	"maps"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Client is a connection to one MCP server, in whichever era was
// negotiated. Every method works in both eras and on every transport.
//
// All methods are safe for concurrent use. [Client.Close] ends the
// connection, every [Subscription] and every goroutine the client started.
type Client struct {
	sess      *engine.Session                                                                 // written once by Connect
	cfg       *config                                                                         // frozen at Connect
	key       string                                                                          // server key for the caches
	headerID  string                                                                          // written once by connect: names the client's own headers for the private cache partition
	eraKey    string                                                                          // era cache key; "" for none
	hinted    bool                                                                            // written once by connect: negotiated from an era cache record
	verified  atomic.Bool                                                                     // a request succeeded (proves a hinted era)
	doubted   atomic.Bool                                                                     // a request failed before any succeeded (casts doubt on a hinted era)
	kind      string                                                                          // transport kind
	listeners handler.Set                                                                     // the user's handler, detected once; the session's Config.Handler points here
	mw        func(context.Context, *engine.Message, engine.Invoker) (json.RawMessage, error) // WithMiddleware's chain; nil for none

	tools toolRegistry // per-connection tool metadata

	cacheHealth storeHealth // the cache store's failures, logged once
	eraHealth   storeHealth // the era store's failures, logged once

	logLevel atomic.Value // protocol.LoggingLevel; modern per-request level

	discMu sync.Mutex // guards the refreshed discover result
	disc   *discoverEntry

	subsMu sync.Mutex                 // guards subs
	subs   map[*Subscription]struct{} // live subscriptions (legacy ones get notifications through here)
	// observers are link.Observe's functions (client/events); guarded
	// by subsMu.
	observers map[*observer]struct{}

	closeOnce sync.Once
	closed    chan struct{}  // closed when Close starts
	wg        sync.WaitGroup // subscription goroutines
	closeErr  error          // written once by Close
}

// connSeq makes the server key of connections that have no natural key.
var connSeq atomic.Int64

// Connect negotiates with the server behind t and returns a ready Client.
// When t has a ServerKey method (a transport.Stdio has), verdicts and
// cached results are remembered under its key (see [WithEraCache]).
//
// Errors: an [*Error] with Op "connect" whose Kind says what failed, whose
// Err is the cause (a *negotiation.Error, a
// *negotiation.UnsupportedProtocolVersionError, transport errors such as
// *transport.ExitError or *transport.HTTPError, ctx.Err(), …; a refused
// authorization matches [ErrAuthRequired]) and whose Trace lists the
// negotiation steps taken.
func Connect(ctx context.Context, t transport.Transport, opts ...Option) (*Client, error) {
	cfg := newConfig(opts)
	eraKey := "" // no era caching without a server key
	if k, ok := t.(interface{ ServerKey() string }); ok {
		eraKey = k.ServerKey()
	}
	key := eraKey
	if key == "" {
		key = "conn-" + strconv.FormatInt(connSeq.Add(1), 10)
	}
	c, err := connect(ctx, t, nil, cfg, key, eraKey)
	if err != nil {
		return nil, connectError(t, err)
	}
	return c, nil
}

func connect(ctx context.Context, t, fallback transport.Transport, cfg *config, key, eraKey string) (*Client, error) {
	c := &Client{
		cfg:    cfg,
		key:    key,
		eraKey: eraKey,
		closed: make(chan struct{}),
	}
	scfg, err := sessionConfig(cfg, &c.listeners)
	if err != nil {
		return nil, err
	}
	if cfg.cache != nil {
		c.headerID = headersIdentity(cfg.headers, cfg.defaults.headers)
	}
	if k, ok := t.(transport.Kinder); ok {
		c.kind = k.Kind()
	}
	scfg.Tap = cfg.messageLog
	scfg.Middleware = chainMiddleware(cfg.middleware, serverAddress(t, cfg.endpoint))
	c.mw = scfg.Middleware
	scfg.Fallback = fallback
	scfg.OnNotification = c.onNotification
	scfg.OnRestored = c.onRestored

	hint, discExpires := c.eraHint(ctx)
	hinted := hint.Era != negotiation.EraUnknown
	scfg.EraHint, scfg.VersionHint, scfg.DiscoverHint = hint.Era, hint.Version, hint.disc
	sess, err := engine.Connect(ctx, t, scfg)
	if hinted && (err != nil && ctx.Err() == nil || sess != nil && sess.HintFailed()) {
		// The engine verified the remembered verdict and found it wrong
		// (it then probed): forget it.
		c.eraHealth.Report(cfg.logger, "era", time.Now(), cfg.eraCache.DeleteEra(ctx, eraKey))
		hinted = false
	}
	if err != nil {
		return nil, err
	}
	c.sess = sess
	c.hinted = hinted
	if k := sess.TransportKind(); k != "" {
		c.kind = k
	}
	if hinted && hint.disc != nil {
		// The cached discover result keeps its own expiry.
		c.discMu.Lock()
		c.disc = &discoverEntry{res: hint.disc, expires: discExpires}
		c.discMu.Unlock()
	} else {
		c.seedDiscover()
	}
	c.rememberEra()
	c.autoListen(ctx)
	c.watchRoots()
	return c, nil
}

// eraHintRec is the verdict an era cache record offers a connection.
type eraHintRec struct {
	Era     negotiation.Era
	Version string
	disc    *negotiation.DiscoverResult
}

// eraHint reads the era cache: a legacy record as it is, a modern one only
// while its server/discover result is fresh (so that a zero-RTT reconnect
// knows the server's info, instructions and capabilities); a stale or
// incomplete modern record gives no hint, and the probe discovers again.
func (c *Client) eraHint(ctx context.Context) (eraHintRec, time.Time) {
	cfg := c.cfg
	if cfg.eraCache == nil || c.eraKey == "" || cfg.protocol != Auto {
		return eraHintRec{}, time.Time{}
	}
	started := time.Now()
	rec, ok, err := cfg.eraCache.LoadEra(ctx, c.eraKey)
	if !c.eraHealth.Report(cfg.logger, "era", started, err) || !ok {
		return eraHintRec{}, time.Time{}
	}
	switch rec.Era {
	case negotiation.EraLegacy:
		return eraHintRec{Era: rec.Era, Version: rec.Version}, time.Time{}
	case negotiation.EraModern:
		if d, expires := freshDiscover(rec, cfg.now()); d != nil {
			return eraHintRec{Era: rec.Era, Version: rec.Version, disc: d}, expires
		}
	}
	return eraHintRec{}, time.Time{}
}

// rememberEra records the current verdict in the era cache. It runs after
// Connect and again at Close, so that a hint the session corrected during
// the connection is replaced. A verdict that came from the cache is
// re-recorded only once a request succeeded with it; a hinted connection
// whose requests failed before any succeeded forgets the record at Close,
// so the next connection probes again.
func (c *Client) rememberEra() {
	if c.cfg.eraCache == nil || c.eraKey == "" {
		return
	}
	if c.hinted && !c.verified.Load() {
		if c.doubted.Load() && isClosing(c.closed) {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			c.eraHealth.Report(c.cfg.logger, "era", time.Now(), c.cfg.eraCache.DeleteEra(ctx, c.eraKey))
		}
		return
	}
	era := c.sess.Era()
	if era == negotiation.EraUnknown {
		return
	}
	rec := cache.EraRecord{Era: era, Version: c.sess.ProtocolVersion()}
	if era == negotiation.EraModern {
		c.discMu.Lock()
		d := c.disc
		c.discMu.Unlock()
		if d == nil || len(d.res.Raw) == 0 {
			// Without the server's description a cached verdict would
			// make a reconnect that knows nothing of the server.
			return
		}
		rec.Discover = string(d.res.Raw)
		rec.DiscoveredAt = d.expires.Add(-msTTL(d.res.TTLMs)).Round(0).UTC()
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	started := time.Now()
	c.eraHealth.Report(c.cfg.logger, "era", started, c.cfg.eraCache.StoreEra(ctx, c.eraKey, rec))
}

func isClosing(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// sessionConfig translates the client options into an engine.Config,
// whose Handler is set, filled in here with the handler cfg names.
func sessionConfig(cfg *config, set *handler.Set) (engine.Config, error) {
	// A handler that serves nothing, or has a method named for an
	// interface it does not implement, fails: the error says why.
	var err error
	if *set, err = detectHandler(cfg.handler); err != nil {
		return engine.Config{}, err
	}
	defaults, err := cfg.defaultCall()
	if err != nil {
		return engine.Config{}, err
	}
	cfg.defaults = defaults
	s := engine.Config{
		Handler:        set,
		ClientInfo:     cfg.clientInfo,
		ProbeTimeout:   cfg.probeTimeout,
		RequestTimeout: cfg.defaults.timeout,
		IdleTimeout:    cfg.defaults.idle,
		Replay:         cfg.defaults.replay,
		OnEvent:        connEventHook(cfg.onEvent),
		Retry:          cfg.retry,
		Liveness:       cfg.liveness,
		Logger:         cfg.logger,
		Authorize:      cfg.auth.Authorize,
		MaxInputRounds: cfg.maxInputRounds,
		OlderVersions:  cfg.olderVersions,
		CapabilityOptions: negotiation.CapabilityOptions{
			SamplingTools:    cfg.capOpts.SamplingTools,
			SamplingContext:  cfg.capOpts.SamplingContext,
			RootsListChanged: cfg.capOpts.RootsListChanged,
			TaskRequests:     cfg.capOpts.TaskRequests,
		},
	}
	if cfg.hasRoots {
		// The client's own list answers roots requests and announces its
		// changes (legacy).
		if err := checkRoots("connect", cfg.roots); err != nil {
			return engine.Config{}, err
		}
		s.Handler.RootsLister = newRootList(cfg.roots)
		s.CapabilityOptions.RootsListChanged = true
	}
	switch cfg.protocol {
	case Auto:
		s.Mode = engine.ModeAuto
	case Modern:
		s.Mode = engine.ModeModern
	case Legacy:
		s.Mode = engine.ModeLegacy
	default:
		v := pinnedVersion(cfg.protocol)
		if err := checkPin(v, cfg.olderVersions); err != nil {
			return s, err
		}
		s.Mode = engine.ModePinned
		s.PinVersion = v
	}
	s.ExtraCapabilities, err = cfg.declaredExtensions()
	return s, err
}

// declaredExtensions returns what adds the declared client extensions
// (CapabilityOptions.Extensions, the tasks extension) to the advertised
// capabilities, or nil when there are none. Declaring the tasks extension
// by its identifier turns TasksExtension on.
func (cfg *config) declaredExtensions() (func(*protocol.ClientCapabilities), error) {
	exts, err := cfg.capOpts.extensions()
	if err != nil {
		return nil, err
	}
	if _, ok := exts[protocol.ExtensionTasks]; ok {
		cfg.capOpts.TasksExtension = true
	}
	if cfg.capOpts.TasksExtension {
		if exts == nil {
			exts = map[string]json.RawMessage{}
		}
		if _, ok := exts[protocol.ExtensionTasks]; !ok {
			exts[protocol.ExtensionTasks] = json.RawMessage(`{}`)
		}
	}
	if len(exts) == 0 {
		return nil, nil
	}
	return func(caps *protocol.ClientCapabilities) {
		if caps.Extensions == nil {
			caps.Extensions = make(map[string]json.RawMessage, len(exts))
		}
		maps.Copy(caps.Extensions, exts)
	}, nil
}

// detectHandler detects the interfaces of the user's handler, once per
// client; the set goes to the session, which serves and notifies through
// it. A form-mode Elicitor is wrapped to validate its answers (see
// validatingElicitor); the advertised capabilities stay those of h.
func detectHandler(h any) (handler.Set, error) {
	set, err := handler.Inspect(h)
	if set.Elicitor != nil {
		set.Elicitor = &validatingElicitor{inner: set.Elicitor, next: h}
	}
	return set, err
}

// onNotification is the session's OnNotification: it runs on the
// session's dispatcher goroutine, in arrival order, just before the
// session calls the handler's listeners. It invalidates caches and feeds
// legacy subscriptions (without blocking).
func (c *Client) onNotification(_ context.Context, n *jsonrpc.Request) {
	c.invalidate(n.Method, n.Params)
	c.subsMu.Lock()
	for s := range c.subs {
		if s.legacy {
			s.deliverNotification(n)
		}
	}
	for o := range c.observers {
		o.f(n)
	}
	c.subsMu.Unlock()
}

// Close ends every subscription and the connection, and waits for every
// goroutine the client started. It returns within the transport's close
// bound — stdio: the command's TerminateDelay + KillDelay (2 s + 2 s by
// default); Streamable HTTP: [transport.DeleteTimeout] for a legacy
// session's DELETE; WebSocket: 10 s for the close handshake (5 s to send
// the close frame, 5 s for the answer) — plus 10 s only when a handler
// ignores its cancelled context (Close then returns a timeout error).
// client/close_bound_test.go holds it to that.
// It is idempotent and safe to call concurrently; later calls return the
// first call's result.
func (c *Client) Close() error {
	c.closeOnce.Do(func() {
		c.subsMu.Lock()
		close(c.closed) // under subsMu: see register
		subs := make([]*Subscription, 0, len(c.subs))
		for s := range c.subs {
			subs = append(subs, s)
		}
		c.subsMu.Unlock()
		for _, s := range subs {
			s.stop()
		}
		c.rememberEra()
		c.closeErr = c.sess.Close()
		c.wg.Wait()
	})
	return c.closeErr
}

// Done is closed when the connection has ended (Close, or a failure the
// session could not heal); [Client.Err] then says why.
func (c *Client) Done() <-chan struct{} { return c.sess.Done() }

// Err returns nil while the connection is usable; once [Client.Done] is
// closed, an error matching [ErrClosed] after Close, or the [*Error] of
// the failure the connection could not heal from (a server process that
// keeps dying, a server that changed era, …).
func (c *Client) Err() error {
	err := c.sess.Err()
	if err == nil {
		return nil
	}
	return c.fail("connect", err)
}

// ServerInfo returns the server's self-description, or nil when the server
// sent none (modern servers may omit it).
func (c *Client) ServerInfo() *protocol.Implementation { return c.sess.ServerInfo() }

// Instructions returns the server's instructions for the model, or "".
func (c *Client) Instructions() string {
	if d := c.freshDiscover(); d != nil {
		return d.Instructions
	}
	return c.sess.Instructions()
}

// ServerCapabilities returns what the server advertised (initialize result
// or the latest server/discover result).
func (c *Client) ServerCapabilities() protocol.ServerCapabilities {
	if d := c.freshDiscover(); d != nil {
		return d.Capabilities
	}
	return c.sess.ServerCapabilities()
}

// Negotiation is what a connection negotiated, as [Client.Negotiated]
// reports it.
type Negotiation struct {
	// Era is the negotiated era.
	Era negotiation.Era
	// Version is the negotiated protocol version.
	Version string
	// Transport is the kind of the transport in use ("stdio", "http",
	// "websocket", "sse" or "memory").
	Transport string
	// ClientCapabilities is what this client advertises in the era.
	ClientCapabilities protocol.ClientCapabilities
	// Trace lists the negotiation steps taken so far (re-negotiations
	// after a lost connection included), for diagnostics.
	Trace []TraceStep
	// Discover is the newest server/discover result the client knows
	// (from the negotiation, an era cache record, [Client.Ping], or a
	// server/discover sent with [Client.Call]); nil in the legacy era.
	// A fresh one is c.Call(ctx, protocol.MethodDiscover, nil, &res).
	// The value is the client's own: do not modify it.
	Discover *negotiation.DiscoverResult
}

// Negotiated reports what the connection negotiated. It reflects the
// latest re-negotiation; the Trace is a copy.
func (c *Client) Negotiated() Negotiation {
	n := Negotiation{
		Era:                c.sess.Era(),
		Version:            c.sess.ProtocolVersion(),
		Transport:          c.kind,
		ClientCapabilities: c.sess.ClientCapabilities(),
		Trace:              traceOf(c.sess.Trace()),
	}
	if n.Era == negotiation.EraModern {
		n.Discover = c.freshDiscover()
	}
	return n
}

// isModern reports whether the modern era was negotiated.
func (c *Client) isModern() bool { return c.sess.Era() == negotiation.EraModern }

// isHTTP reports whether per-request HTTP headers reach the server.
func (c *Client) isHTTP() bool { return c.kind == transport.KindHTTP }

// call sends one request through the session, adding the remembered
// modern log level.
func (c *Client) call(ctx context.Context, method string, params any, opts *engine.CallOptions) (json.RawMessage, error) {
	if opts == nil {
		opts = c.cfg.defaults.sessionOptions()
	}
	if opts.LogLevel == "" && c.isModern() {
		if l, _ := c.logLevel.Load().(protocol.LoggingLevel); l != "" {
			opts.LogLevel = l
		}
	}
	raw, err := c.sess.Call(ctx, method, params, opts)
	if err == nil || isType[*engine.InputRequiredError](err) {
		// A call stopped for input was answered too.
		c.verified.Store(true)
	} else if ctx.Err() == nil && !c.verified.Load() {
		c.doubted.Store(true)
	}
	return raw, c.fail(method, inputRequired(err))
}

// decode unmarshals a result into v; a failure is an *Error of kind
// KindProtocol.
func decode(method string, raw json.RawMessage, v any) error {
	var err error
	if u, ok := v.(json.Unmarshaler); ok {
		// What json.Unmarshal would call, without scanning raw once more
		// before it: the result types' UnmarshalJSON decode with
		// json.Unmarshal themselves, which checks raw as well.
		err = u.UnmarshalJSON(raw)
	} else {
		err = json.Unmarshal(raw, v)
	}
	if err != nil {
		return resultError(method, err)
	}
	return nil
}

// require refuses a call when strict capabilities are on and have is
// false.
func (c *Client) require(method, capability string, have bool) error {
	if c.cfg.capOpts.Strict && !have && c.serverKnown() {
		return capabilityError(method, capability)
	}
	return nil
}

// serverKnown reports whether the server's capabilities are known: from
// initialize, or from a server/discover result. A connection negotiated
// from a cached hint without one (not made by this package's era cache,
// which keeps the discover result) does not know them, and strict
// capabilities then refuse nothing.
func (c *Client) serverKnown() bool {
	return !c.isModern() || c.freshDiscover() != nil
}
