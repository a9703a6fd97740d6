package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/conduitmcp/conduit/cache"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Protocol selects how a client negotiates the protocol era: one of the
// modes below or a version pinned by [Pin]. As a string it is the mode's
// name ("auto", "modern", "legacy") or the pinned version. The zero
// value, "", selects [Auto] too.
type Protocol string

// Protocol modes.
const (
	// Auto probes the server with server/discover and falls back to the
	// legacy initialize handshake when the evidence says legacy.
	Auto Protocol = "auto"
	// Modern speaks only the modern era (2026-07-28 and later): legacy
	// evidence is a typed error, never a fallback.
	Modern Protocol = "modern"
	// Legacy sends initialize at once and speaks the legacy era only.
	Legacy Protocol = "legacy"
)

// Pin returns a Protocol that speaks exactly version (modern or legacy,
// e.g. "2026-07-28" or "2025-06-18") with no fallback. An unknown version
// makes Connect fail, and so does a mode's name: Pin("auto"),
// Pin("modern"), Pin("legacy") and Pin("") are not versions and never
// select a mode.
func Pin(version string) Protocol {
	switch Protocol(version) {
	case "", Auto, Modern, Legacy:
		return Protocol(notVersion + version)
	}
	return Protocol(version)
}

// notVersion prefixes the Pin of a mode's name, so that it stays a pin
// (of an unknown version) instead of becoming the mode.
const notVersion = "pin:"

// pinnedVersion is the version p pins (p is not a mode).
func pinnedVersion(p Protocol) string { return strings.TrimPrefix(string(p), notVersion) }

// CapabilityOptions refine the capabilities on both sides of the
// connection: what the client advertises beyond what its handler
// implies, and how strictly it holds the server to what the server
// advertised. Every field defaults to false. The sampling, roots and task
// request fields matter only when the handler implements the interface
// they refine.
type CapabilityOptions struct {
	// SamplingTools declares sampling.tools (the Sampler handles tools
	// and toolChoice).
	SamplingTools bool
	// SamplingContext declares sampling.context (includeContext other
	// than "none"; deprecated by the spec).
	SamplingContext bool
	// RootsListChanged declares roots.listChanged in the legacy era, for
	// a handler.RootsLister whose changes the server is told of
	// ([WithRoots] declares it itself).
	RootsListChanged bool
	// TaskRequests lets a 2025-11-25 server run sampling/createMessage
	// and elicitation/create as tasks on the client: it declares the
	// client tasks capability for the requests the handler serves (none
	// without a Sampler, Elicitor or URLElicitor), and the client then
	// answers a task-augmented request at once with a task, runs the
	// handler in the background, and serves tasks/get, tasks/result,
	// tasks/list and tasks/cancel for it. Legacy era only (the modern era
	// has no server requests).
	TaskRequests bool
	// TasksExtension advertises the modern tasks extension
	// (io.modelcontextprotocol/tasks): the server may then answer any
	// tools/call with a task, which [Client.CallTool] awaits transparently
	// ([Client.StartTool] returns it instead; see [Client.AwaitTask]). The
	// per-call [WithTaskAugmentation] serves 2025-11-25.
	TasksExtension bool
	// Strict makes the client refuse, without a round trip, calls to
	// features the server did not advertise: they fail with an [*Error]
	// of kind [KindUnsupported] matching [ErrNotSupported]. False: the
	// server decides.
	Strict bool
	// Extensions declares client extensions, identifier to settings (nil
	// settings are sent as {}), in the advertised capabilities'
	// extensions member: in every modern request's clientCapabilities and
	// in the legacy initialize (a legacy server that does not know the
	// member ignores it). An identifier needs its prefix
	// ("com.example/feature"; io.modelcontextprotocol/ names the official
	// extensions, see [protocol.CheckExtensionID]); a malformed one makes
	// Connect and Dial fail with an [*Error] of kind [KindInvalid].
	// io.modelcontextprotocol/tasks here is the same as TasksExtension.
	// Methods an extension adds are called with [Client.Call] and
	// [Client.Notify].
	Extensions map[string]json.RawMessage
}

// extensions checks the declared extensions and returns them with {} for
// nil settings.
func (o CapabilityOptions) extensions() (map[string]json.RawMessage, error) {
	if len(o.Extensions) == 0 {
		return nil, nil
	}
	out := make(map[string]json.RawMessage, len(o.Extensions))
	for id, v := range o.Extensions {
		if err := protocol.CheckExtensionID(id); err != nil {
			return nil, &Error{Op: "connect", Kind: KindInvalid, Err: fmt.Errorf("CapabilityOptions.Extensions: %w", err)}
		}
		if len(v) == 0 || string(v) == "null" {
			v = json.RawMessage(`{}`)
		} else if !json.Valid(v) || v[0] != '{' {
			return nil, &Error{Op: "connect", Kind: KindInvalid, Err: fmt.Errorf("CapabilityOptions.Extensions: the settings of %q are not a JSON object", id)}
		}
		out[id] = v
	}
	return out, nil
}

// Auth configures authorization for HTTP servers. The auth package builds
// full OAuth flows on top of it: an *auth.Client is a complete Auth as
// Auth{Tokens: a} (see Tokens).
type Auth struct {
	// Tokens supplies "Authorization: Bearer" tokens for every HTTP
	// request. Nil sends no Authorization header. Its optional methods
	// (all of which an *auth.Client has) do more:
	//   - Header(context.Context, *http.Request) error: when the Header
	//     field is nil, it sets the credentials of every request instead
	//     of Token (so a DPoP-bound token works);
	//   - Authorize(context.Context, *transport.HTTPError) error: when the
	//     Authorize field is nil, it answers a 401 or 403;
	//   - Identity() string: it names the authorization context (for
	//     example issuer + subject).
	//
	// Private cache entries ([WithCache]) are partitioned by the
	// authorization context: Identity() when Tokens has it, else a hash of
	// the current token, or of the Authorization header that Header sets
	// (on [Dial]'s endpoint), named before the request is sent. When that
	// cannot be had (Token fails), private results are neither cached nor
	// served from the cache. Headers of the client's own ([WithHeaders],
	// and [WithCallHeaders] among [WithCallDefaults]) may carry
	// credentials too: they narrow the context, so clients whose headers
	// differ share no private entries. Credentials that a custom HTTP
	// client adds ([WithHTTPClient]'s Transport, a cookie jar) cannot be
	// seen: clients with different ones must not share a store.
	Tokens transport.TokenSource
	// Authorize is called when the server answers 401 or 403 with the
	// challenge; it should obtain (new) credentials so that Tokens returns
	// a valid token, then return nil to have the request retried. Nil
	// means a 401/403 fails with the session's typed auth error.
	Authorize func(ctx context.Context, challenge *transport.HTTPError) error
	// Header, when set, is called for every HTTP request (POSTs, the GET
	// stream, DELETE, the WebSocket handshake) and may set credentials on
	// it, for example a DPoP-bound token with its proof. It runs after
	// Tokens. Nil adds nothing.
	Header func(ctx context.Context, req *http.Request) error
}

// Option configures a [Client]. Options are applied in order; for each
// setting the last option wins. They are copied on entry: a Client never
// keeps a reference to a value an option was given except where noted
// (handler, logger, HTTP client, caches and token sources are used, not
// copied).
type Option interface {
	apply(*config)
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// config is the frozen configuration of one Client.
type config struct {
	protocol       Protocol
	handler        any
	clientInfo     *protocol.Implementation // nil: the engine's default
	httpClient     *http.Client
	crossOrigin    bool // WithCrossOriginRedirects
	headers        http.Header
	probeTimeout   time.Duration
	callDefaults   []CallOption // WithCallDefaults, in order
	defaults       callConfig   // callDefaults applied; set by sessionConfig
	onEvent        func(ConnEvent)
	retry          engine.RetryPolicy
	liveness       engine.Liveness // WithRetry's keepalive and re-listen pacing
	logger         *slog.Logger
	capOpts        CapabilityOptions
	auth           Auth
	credentials    transport.TokenSource // Auth.Tokens as given; names the private cache partition
	endpoint       string                // Dial's endpoint URL; "" for Connect
	cache          cache.Store
	eraCache       cache.EraStore
	olderVersions  bool
	maxPages       int
	messageLog     func(sent bool, msg jsonrpc.Message)
	middleware     []Middleware
	maxInputRounds int              // MRTR round cap; 0 for the engine's default
	roots          []protocol.Root  // WithRoots: the initial list
	hasRoots       bool             // WithRoots was given
	now            func() time.Time // test seam; nil => time.Now
}

// discardLogger is the logger of every Client without WithLogger: a
// Logger is immutable, so one serves them all.
var discardLogger = slog.New(slog.DiscardHandler)

// defaultMaxPages bounds a listing walk (tests lower it).
const defaultMaxPages = 1000

// newConfig applies opts to a new config; the Client keeps it (the
// options' closures take its address, so it is on the heap anyway).
func newConfig(opts []Option) *config {
	c := &config{maxPages: defaultMaxPages}
	for _, o := range opts {
		if o != nil {
			o.apply(c)
		}
	}
	if c.protocol == "" {
		c.protocol = Auto
	}
	if c.logger == nil {
		c.logger = discardLogger
	}
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// WithProtocol selects era negotiation. Default (and ""): [Auto].
func WithProtocol(p Protocol) Option {
	return optionFunc(func(c *config) { c.protocol = p })
}

// WithHandler sets the value that serves server-initiated work. The
// interfaces of package handler it implements (directly or through an
// Unwrap() any chain; for a handler.Funcs, the fields that are set) decide
// the advertised client capabilities; nil (the default) advertises none.
// A non-nil h that implements none of them, or has a method named for one
// that does not implement it (a wrong signature, a misspelt name, a
// pointer receiver on a value passed by value), makes [Connect] and [Dial]
// fail with an [*Error] of kind [KindInvalid] wrapping the
// *handler.CheckError (see handler.Check), which matches
// handler.ErrNoInterface or handler.ErrMethodMismatch. Form elicitation answers are validated against
// the requested schema, with defaults applied, before they are sent.
//
// Listener interfaces (handler.LogListener, handler.ToolsChangedListener,
// …) receive notifications in order from one goroutine. Legacy servers
// send list changes unsolicited; in the modern era the client opens a
// subscriptions/listen stream at connect time for the change listeners
// the handler implements (see [Client.Subscribe] for finer control).
func WithHandler(h any) Option {
	return optionFunc(func(c *config) { c.handler = h })
}

// WithClientInfo sets the client's name and version sent to servers.
// Default: {Name: "conduit", Version: the module version}.
func WithClientInfo(info protocol.Implementation) Option {
	info.Icons = append([]protocol.Icon(nil), info.Icons...)
	p := &info
	return optionFunc(func(c *config) { c.clientInfo = p })
}

// WithHTTPClient sets the HTTP client used by [Dial]'s HTTP transports.
// Default: a client without timeout over transport.DefaultPool, the
// connection pool the Clients of a program share: clients to one server
// reuse each other's idle TCP connections, and those left idle after
// [Client.Close] belong to the pool (transport.CloseIdleConnections
// closes them), while each Client keeps its own redirect policy and
// credentials.
// hc is copied, never modified; its Transport is shared as it is. Ignored
// by [Connect], whose transport is already built.
func WithHTTPClient(hc *http.Client) Option {
	return optionFunc(func(c *config) { c.httpClient = hc })
}

// WithCrossOriginRedirects makes [Dial]'s transports follow a redirect to
// another origin (scheme, host, port) without the request's body,
// credentials and custom headers (see
// transport.StreamableHTTP.CrossOriginRedirects). Default: redirects are
// followed within the endpoint's origin only, and one to another origin
// fails with a [*transport.RedirectError] naming both. A redirect from
// https to http is never followed. Ignored by [Connect].
func WithCrossOriginRedirects() Option {
	return optionFunc(func(c *config) { c.crossOrigin = true })
}

// WithHeaders adds h to every HTTP request [Dial]'s transports send (the
// header is cloned). Default: none. Ignored by [Connect].
func WithHeaders(h http.Header) Option {
	h = h.Clone()
	return optionFunc(func(c *config) { c.headers = h })
}

// WithCallDefaults sets call options that apply to every request the
// client sends (CallTool, Call, GetPrompt, the listings, reads, task
// polls, …) before the call's own options, which override them. For
// example WithCallDefaults(WithIdleTimeout(30*time.Second),
// WithReplay(ReplayNone)) gives every call an idle timeout and no replay
// unless the call says otherwise; [WithTimeout] here is every call's
// deadline, [WithCallMeta] and [WithCallHeaders] add to every request.
// Several WithCallDefaults add up, in order.
//
// [WithReplayed] and [WithProgress] carry one call's state and cannot be
// defaults: given here, they make [Connect] and [Dial] fail with an
// [*Error] of kind [KindInvalid] naming the option; so does a WithCallMeta
// or WithCallHeaders that cannot apply. Default: none, so a call is
// bounded only by its context (a long tool is never cut off at an
// arbitrary 60 seconds) and replayed under [ReplaySafe].
func WithCallDefaults(opts ...CallOption) Option {
	opts = slices.Clone(opts)
	return optionFunc(func(c *config) { c.callDefaults = append(c.callDefaults, opts...) })
}

// defaultCall applies the options of WithCallDefaults, refusing those
// that carry one call's state.
func (cfg *config) defaultCall() (callConfig, error) {
	d := newCallConfig(cfg.callDefaults)
	var err error
	switch {
	case d.replayed != nil:
		err = errors.New("WithReplayed cannot be a call default (WithCallDefaults): it reports on one call")
	case d.progress != nil:
		err = errors.New("WithProgress cannot be a call default (WithCallDefaults): it receives one call's progress")
	case d.optErr != nil:
		err = fmt.Errorf("WithCallDefaults: %w", d.optErr)
	}
	if err != nil {
		return callConfig{}, &Error{Op: "connect", Kind: KindInvalid, Err: err}
	}
	return d, nil
}

// callOptions is the configuration of one call: the client's call
// defaults, then opts.
func (c *Client) callOptions(opts []CallOption) callConfig {
	cc := c.cfg.defaults
	cc.meta = maps.Clone(cc.meta) // WithCallMeta adds to it in place
	for _, o := range opts {
		if o != nil {
			o.applyCall(&cc)
		}
	}
	if err := c.identityError(&cc); err != nil && cc.optErr == nil {
		cc.optErr = err
	}
	return cc
}

// WithRetry sets the backoff used when the server or network asks for a
// retry (HTTP 408/429/5xx, network errors, probe timeouts off stdio),
// the era probe's timeout ([RetryPolicy.ProbeTimeout]), the keepalive
// ([RetryPolicy.KeepAlive]) and the pacing of re-listens
// ([RetryPolicy.ReconnectInitial]). Default: the zero [RetryPolicy], which
// selects the default schedule, a 5s probe and no keepalive.
func WithRetry(p RetryPolicy) Option {
	return optionFunc(func(c *config) {
		c.retry, c.probeTimeout, c.liveness = p.engine(), max(p.ProbeTimeout, 0), p.liveness()
	})
}

// WithLogger sets the logger for diagnostics (dropped tools, overflowing
// subscriptions, retries). Default (and nil): discard.
func WithLogger(l *slog.Logger) Option {
	return optionFunc(func(c *config) { c.logger = l })
}

// WithCapabilityOptions refines the capabilities the client advertises and
// how strictly it holds the server to its own. Default: the zero
// [CapabilityOptions].
func WithCapabilityOptions(o CapabilityOptions) Option {
	return optionFunc(func(c *config) { c.capOpts = o })
}

// WithAuth sets authorization for HTTP servers. Default: none. With
// [Connect] only Auth.Authorize is used (the transport adds no token).
func WithAuth(a Auth) Option {
	return optionFunc(func(c *config) { c.auth, c.credentials = resolveAuth(a), a.Tokens })
}

// WithCache sets the store for cacheable modern results (tools/list,
// prompts/list, resources/list, resources/templates/list, resources/read):
// a result is served from it while its ttlMs lasts.
// Default (and nil): no caching. [cache.NewMemory] is an in-memory store;
// a store may be shared by several clients (and, through the redisstore
// module, by replicas). A store that fails costs the cache, never the call: the
// call goes on uncached, and the failure is logged once per outage.
func WithCache(c cache.Store) Option {
	return optionFunc(func(cfg *config) { cfg.cache = c })
}

// WithEraCache sets where negotiation verdicts are remembered, so that a
// reconnect to the same server skips the probe; a verdict that proves
// wrong is dropped and the server re-probed. Default (and nil): none.
//
// The server's key, here and in the [WithCache] store, is the endpoint
// URL for [Dial]; for [Connect] it is the key of a transport implementing
//
//	interface{ ServerKey() string }
//
// (a transport.Stdio's is its command line); any other transport gets no
// era caching and a key unique to the connection. A store that fails
// costs the hint, never the connection: it probes, and the failure is
// logged once per outage.
func WithEraCache(ec cache.EraStore) Option {
	return optionFunc(func(c *config) { c.eraCache = ec })
}

// withClock is a test seam (see export_test.go).
func withClock(now func() time.Time) Option {
	return optionFunc(func(c *config) { c.now = now })
}

// withMaxPages is a test seam (see export_test.go): it lowers the page
// cap of a listing walk.
func withMaxPages(n int) Option {
	return optionFunc(func(c *config) { c.maxPages = max(n, 1) })
}
