package engine

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Version is the module version reported in the default client info.
const Version = "0.1.0"

// Defaults and bounds. Each is a named constant so that every wait the
// session does is visibly bounded.
const (
	// DefaultProbeTimeout bounds the server/discover probe when
	// Config.ProbeTimeout is 0.
	DefaultProbeTimeout = 5 * time.Second
	// DefaultMaxInputRounds caps MRTR rounds when Config.MaxInputRounds is 0.
	DefaultMaxInputRounds = 10
	// CancelNotifyTimeout bounds the best-effort notifications/cancelled
	// sent after a caller gave up.
	CancelNotifyTimeout = 5 * time.Second
	// CloseTimeout bounds how long Close waits for goroutines running
	// user code (handlers that ignore their context).
	CloseTimeout = 10 * time.Second
	// HealTimeout bounds one attempt to reconnect and re-negotiate after
	// the connection was lost.
	HealTimeout = 30 * time.Second
	// MaxQueuedNotifications bounds the notification queue; see the
	// package documentation for the overflow policy (drop oldest).
	MaxQueuedNotifications = 1024
	// MaxQueuedNotificationBytes bounds the bytes of the params the
	// notification queue holds, with the same overflow policy: a server
	// chooses how large a notification is, up to the transport's
	// message limit.
	MaxQueuedNotificationBytes = 32 << 20
	// StreamBuffer is the buffer of a listen Stream; see the package
	// documentation for the overflow policy.
	StreamBuffer = 256
	// MaxConcurrentServerRequests bounds the legacy server requests served
	// at once; requests beyond it are answered with a JSON-RPC error
	// (-32603, "client busy"), so that a flooding server cannot grow the
	// client's goroutines without bound and never waits for an answer.
	MaxConcurrentServerRequests = 256
	// MaxInputRequests bounds the inputRequests of one MRTR round, and
	// those of a task (tasks extension) answered at once by
	// [Session.AnswerInputs]; more is an invalid response.
	MaxInputRequests = 64
	// StreamReadyTimeout bounds the wait, after the legacy handshake, for
	// the transport's stream of server-initiated messages (the legacy HTTP
	// GET stream) to open: a server may send a request on it at once. The
	// wait is never fatal (see [transport.StreamReadyWaiter]).
	StreamReadyTimeout = 2 * time.Second
	// maxAuthAttempts bounds Authorize-then-probe cycles.
	maxAuthAttempts = 3
	// maxCallAuthAttempts bounds the Authorize-then-resend cycles of one
	// request (or of initialize) answered HTTP 401 or 403.
	maxCallAuthAttempts = 2
	// maxConsecutiveHeals bounds reconnections without a successful
	// response in between (a server that dies right after every start).
	maxConsecutiveHeals = 3
	// responseWriteTimeout bounds writing the answer to a server request.
	responseWriteTimeout = 30 * time.Second
)

// Mode selects how the protocol era is negotiated.
type Mode int

const (
	// ModeAuto probes with server/discover and may fall back to the legacy
	// initialize handshake. The zero value.
	ModeAuto Mode = iota
	// ModeModern speaks only the modern era: legacy evidence is a typed
	// error and initialize is never sent.
	ModeModern
	// ModeLegacy sends initialize at once.
	ModeLegacy
	// ModePinned uses exactly Config.PinVersion, modern or legacy, with no
	// fallback.
	ModePinned
)

// String returns "auto", "modern", "legacy" or "pinned".
func (m Mode) String() string {
	switch m {
	case ModeAuto:
		return "auto"
	case ModeModern:
		return "modern"
	case ModeLegacy:
		return "legacy"
	case ModePinned:
		return "pinned"
	}
	return "Mode(" + strconv.Itoa(int(m)) + ")"
}

// RetryPolicy bounds the retries of transient failures (HTTP 408, 429, 5xx,
// network errors and HTTP probe timeouts). Zero fields take the defaults
// noted; negative MaxAttempts disables retries.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts; 0 means 5.
	MaxAttempts int
	// InitialInterval is the first wait; 0 means 200ms.
	InitialInterval time.Duration
	// MaxInterval caps each wait; 0 means 5s.
	MaxInterval time.Duration
	// MaxElapsed caps the total time spent retrying; 0 means 30s.
	MaxElapsed time.Duration
}

// Config configures a session. It is copied by [Connect]; later changes
// have no effect. The zero value is usable.
type Config struct {
	// Mode selects the negotiation; the zero value is ModeAuto.
	Mode Mode
	// PinVersion is the exact version of ModePinned.
	PinVersion string
	// Handler is the client's handler, detected once by the caller
	// ([handler.Detect]): the interfaces it holds decide the advertised
	// client capabilities, serve server requests and MRTR input requests,
	// and receive the notifications for its listeners. The session
	// keeps the pointer: the Set must not change afterwards. nil, like
	// the zero Set, advertises {}.
	Handler *handler.Set
	// CapabilityOptions tunes the advertised capabilities; its Era is set
	// by the session.
	CapabilityOptions negotiation.CapabilityOptions
	// ClientInfo identifies the client; the session keeps the pointer, so
	// it must not change afterwards. nil, or a Name of "", means
	// {Name: "conduit", Version: [Version]}.
	ClientInfo *protocol.Implementation
	// ProbeTimeout bounds the server/discover probe; 0 means
	// [DefaultProbeTimeout]. On the stdio child process a timeout means
	// legacy; on every other transport it is retried (seed 003).
	ProbeTimeout time.Duration
	// RequestTimeout is each request's deadline, counted from the moment
	// the call starts (the wait for a reconnection and the write
	// included); progress does not extend it. 0 means no deadline beyond
	// the caller's context.
	RequestTimeout time.Duration
	// IdleTimeout bounds each request's silence: it elapses when the
	// server sent neither the response nor progress for that long (counted
	// from the call's start, then from the last progress). 0 means none.
	IdleTimeout time.Duration
	// Retry bounds the retries of transient failures: probe verdicts
	// "retry", and requests answered HTTP 408, 429 or 5xx (re-sent under a
	// new id when Replay allows).
	Retry RetryPolicy
	// MaxInputRounds caps MRTR rounds; 0 means [DefaultMaxInputRounds].
	MaxInputRounds int
	// Logger receives diagnostics; nil discards them.
	Logger *slog.Logger
	// Authorize is called on HTTP 401/403 and should obtain credentials
	// for the transport: during negotiation (the probe or initialize is
	// then repeated, at most a few times) and on any later request
	// (expired token, 403 insufficient_scope step-up, a new authorization
	// server), which is then re-sent, after at most 2 Authorize calls per
	// request. It runs on the goroutine of the request that was refused,
	// so it may be called concurrently by several requests (the auth
	// package single-flights the token refresh). nil makes a 401/403 an
	// [*AuthRequiredError].
	Authorize func(ctx context.Context, challenge *transport.HTTPError) error
	// Fallback is an optional HTTP+SSE transport tried when initialize is
	// answered 400, 404 or 405 without a modern body.
	Fallback transport.Transport
	// EraHint comes from an era cache: with EraModern or EraLegacy,
	// ModeAuto skips the probe and goes straight to that era, re-probing
	// once if the hint proves wrong (a modern request answered like a
	// legacy server on the first call; initialize answered with a modern
	// error). EraUnknown (the zero value) probes. Other modes ignore it.
	EraHint negotiation.Era
	// VersionHint is the version to use with EraHint; "" (or a version of
	// the other era) means the newest version of the hinted era.
	VersionHint string
	// DiscoverHint is the server/discover result remembered with a modern
	// EraHint (still within its ttlMs): the session then knows the server
	// (Discover, ServerInfo, Instructions, ServerCapabilities) as after a
	// full probe, without sending one. Ignored without a modern EraHint.
	DiscoverHint *negotiation.DiscoverResult
	// OnNotification, when set, sees every server notification the
	// session does not consume itself (progress for a known token,
	// cancellations and listen-stream notifications are consumed), in
	// arrival order, from the one dispatcher goroutine, just before the
	// session routes it to the handler's listener interfaces
	// (LogListener, ToolsChangedListener, …). Setting it does not by
	// itself open the legacy HTTP GET stream, which carries what a
	// server sends outside a request: the listeners, a Middleware and
	// [Session.WantServerMessages] do (see stream.go).
	OnNotification func(ctx context.Context, n *jsonrpc.Request)
	// OnRestored, when set, is called on the dispatcher goroutine (in
	// order with the notifications) after a legacy re-negotiation (an
	// expired HTTP session initialized again, a respawned server) once the
	// engine re-sent the tracked resource subscriptions (see
	// [Session.TrackSubscription]): updates may have been missed.
	OnRestored func(ctx context.Context)
	// Replay decides which requests lost with their connection, response
	// stream or session are re-sent once automatically; the zero value is
	// [ReplaySafe].
	Replay ReplayPolicy
	// OlderVersions widens the versions the session speaks with
	// [negotiation.OlderVersions] (2025-03-26, 2024-11-05). Without it an
	// initialize answered with one of them fails with a
	// [*negotiation.Error] of kind KindNoCommonVersion that names
	// [OlderVersionsOption].
	OlderVersions bool
	// Tap, when set, sees every JSON-RPC message the session sends (sent
	// true) or receives, on every connection it makes (negotiation and
	// reconnections included), at its single write and read points. It is
	// called synchronously on the writing or reading goroutine, possibly
	// concurrently; it must not block, modify m or keep it. A message that
	// fails to be written is still reported.
	Tap func(sent bool, m jsonrpc.Message)
	// ExtraCapabilities may amend the advertised capabilities (e.g. add
	// extensions) before they are frozen. It is called once per era.
	ExtraCapabilities func(*protocol.ClientCapabilities)
	// OnEvent, when set, is told what happens to the connection (see
	// [EventKind]), in order, on the dispatcher goroutine (in order with
	// the notifications): never on the loop. Events still queued when the
	// session closes are delivered by Close, once the dispatcher ended.
	OnEvent func(Event)
	// Middleware, when set, wraps every MCP message at the protocol level
	// (not the wire's: Tap sees the JSON-RPC messages): user requests
	// (Call, all their attempts together) and notifications (Notify,
	// notifications/cancelled), the negotiation's requests and
	// notifications/initialized (Message.Negotiation), incoming legacy
	// server requests and modern MRTR input requests (before the handler
	// serves them) and incoming notifications (on the dispatcher goroutine,
	// before Config.OnNotification and the listeners; progress too). The
	// subscriptions/listen request and the notifications of its stream do
	// not pass through it (package client wraps the stream's notifications
	// itself). It must call next at most once per attempt it
	// wants and return next's error as it is or wrapped.
	Middleware func(ctx context.Context, m *Message, next Invoker) (json.RawMessage, error)
	// Liveness configures the keepalive and the re-listen pacing
	// (keepalive.go); the zero value has no keepalive.
	Liveness Liveness
}

// CallOptions tune one request. A nil *CallOptions is the zero value.
type CallOptions struct {
	// Progress receives notifications/progress for this request, from the
	// dispatcher goroutine; setting it adds a unique progressToken. Every
	// progress notification (and every other notification) that arrived
	// before the response has been delivered when Call returns, unless
	// ctx ended first. Because of that wait, a Progress callback must not
	// itself make a call with Progress or LogLevel set and wait for it;
	// listeners may, with the context they are given.
	Progress func(protocol.ProgressParams)
	// Timeout overrides Config.RequestTimeout: the deadline, which
	// progress does not extend.
	Timeout time.Duration
	// IdleTimeout overrides Config.IdleTimeout: reset on progress.
	IdleTimeout time.Duration
	// LogLevel sets _meta logLevel for this request (modern). The log
	// notifications that arrived before the response have been delivered
	// when Call returns, as for Progress.
	LogLevel protocol.LoggingLevel
	// Headers are extra HTTP headers for this request (Mcp-Param-*).
	Headers http.Header
	// Replay overrides Config.Replay for this request.
	Replay ReplayPolicy
	// Idempotent declares that sending this request twice does no harm
	// (a tool annotated readOnlyHint or idempotentHint): [ReplaySafe]
	// then re-sends it.
	Idempotent bool
	// Safety, when set, is asked under [ReplaySafe] whether a request
	// that may have run (and is neither read-only by protocol nor
	// Idempotent) can be replayed, and why in words: the client uses it
	// for a tool's annotations, which it may list first (on the caller's
	// goroutine, bounded by ctx). It is called at most once per call.
	Safety func(ctx context.Context) (safe bool, why string)
	// OnReplay, when set, is called on the caller's goroutine each time
	// the request is sent again after it was lost, before the new
	// request is written: a result returned after it came from a replay.
	OnReplay func()
	// AcceptTask allows resultType "task" (tasks extension, tools/call).
	// tasks/get accepts "task" as well as "complete" without it
	// (OPEN-QUESTIONS 38).
	AcceptTask bool
	// OnInputRound, when set, is called once per MRTR round of a modern
	// tools/call, prompts/get or resources/read answered input_required,
	// with the round's number (1, 2, …), after the round's input requests
	// were fulfilled and just before the retry carrying inputResponses
	// and/or requestState is sent. Rounds that carry only requestState (no
	// inputRequests, so no handler runs) count too. It is called on the
	// caller's goroutine (the one in Call), never concurrently for one
	// call; a result returned after OnInputRound was called is one that
	// needed input (and must not be cached, for instance). Rounds that
	// fail before their retry is sent (a handler error, too many rounds)
	// do not call it.
	OnInputRound func(round int)
	// Meta are extra params._meta entries of this request (encoded JSON
	// values), in both eras; keys the engine owns fail with
	// [ErrReservedMeta].
	Meta map[string]json.RawMessage
	// ManualInput makes the call hand the input it needs to the caller
	// instead of the handler: a modern input_required round with input
	// requests ends it with an [*InputRequiredError]; in the legacy era
	// the server's input requests are held for the caller (heldinput.go).
	// [Session.Resume] continues it with the answers.
	ManualInput bool

	sent      *jsonrpc.ID                       // set to the request's id after each attempt (callThrough)
	onAttempt func(why string, prev jsonrpc.ID) // Message.OnAttempt (callThrough)
	resume    *callState                        // the state a resumed call starts from (Session.Resume)
	// restoring: the engine's own request after a re-initialization
	// (resubscribe.go); its answer is no sign that the server is healthy
	// again (pendingTable.succeeded).
	restoring bool
}

// TraceStep is one negotiation step.
type TraceStep struct {
	// Step names the step: "connect", "probe", "initialize", "authorize",
	// "retry", "reconnect", "fallback", "hint".
	Step string
	// Sent is what was sent, e.g. "server/discover 2026-07-28".
	Sent string
	// Outcome is what came back, e.g. "result", "rpc-error -32601",
	// "http 503", "timeout".
	Outcome string
	// Verdict is the decision taken, e.g. "modern", "legacy", "retry".
	Verdict string
	// Err is the error text, if any.
	Err string
}

// negState is what negotiation produced. A *negState is immutable once
// published in Session.neg.
type negState struct {
	era       negotiation.Era
	version   string
	discover  *negotiation.DiscoverResult
	init      *protocol.InitializeResult
	prefix    []byte // modern: the constant _meta members, pre-encoded
	hinted    bool   // era came from EraHint and is not verified yet
	kind      string // transport kind
	trace     []TraceStep
	transport transport.Transport // the transport in use (Fallback after a fallback)
	// traceBuf is trace's first array when the negotiation took at most
	// two steps (driver.step, driver.ready).
	traceBuf [2]TraceStep
}

// Session is one negotiated connection to an MCP server. Create it with
// [Connect]; end it with [Session.Close].
type Session struct {
	// Written once in Connect before any goroutine starts; read-only after.
	// cfg.ClientInfo holds the default client info when Config had none.
	cfg        Config
	log        *slog.Logger
	t          transport.Transport
	modernCaps protocol.ClientCapabilities
	legacyCaps protocol.ClientCapabilities

	// dctx.Context is the connection-lifetime context: detached from
	// Connect's ctx with context.WithoutCancel and cancelled by Close
	// (habit 20), and only there (see closing); &dctx is it marked for
	// notification user code (see onDispatcher).
	dctx       dispatchContext
	lifeCancel context.CancelFunc

	// events goes to the loop; buffered so posting is cheap. It is made
	// with the loop (startLoop), under eventsOnce: a session nothing
	// happened to has none.
	events     chan event
	eventsOnce sync.Once
	closeOnce  sync.Once
	// dispatchCh goes from the loop to the dispatcher, unbuffered; the
	// loop makes it when it first starts the dispatcher.
	dispatchCh chan dispatchItem
	urls       urlWaits     // -32042 calls waiting for elicitation/complete (input.go)
	recv       taskReceiver // tasks run for a legacy server (taskrecv.go)
	held       heldCalls    // legacy manual calls holding server requests (heldinput.go)
	// looping is set once the loop's goroutine has been started
	// (startLoop); until then Connect's goroutine owns the loop's state
	// while it holds own (see start).
	looping atomic.Bool
	own     sync.Mutex
	// joining is set by runLoop once it waits for wg; guarded by
	// joinMu, so that a reader started late (startReader) is added to
	// wg before that wait or not at all.
	joinMu  sync.Mutex
	joining bool
	// hintFailed: the era hint failed and Connect negotiated from scratch
	// (see HintFailed); written once by Connect before it returns.
	hintFailed bool
	// sigs are the channels of the signals (signal.go), made when first
	// waited for; sigMu orders their making and closing, and sigMade has
	// a bit set for each one in place.
	sigs    [numSignals]chan struct{}
	sigMu   sync.Mutex
	sigMade atomic.Uint32
	// reconn is Reconnected's channel, made by the first Reconnected
	// since the last re-negotiation, which closes it and sets it to nil
	// under reconnMu while it publishes (becomeReady).
	reconnMu sync.Mutex
	reconn   chan struct{}
	closeErr error // written in closeOnce
	// wg counts readers, the dispatcher, server-request handlers, cancel
	// senders, negotiation steps' I/O, re-listens and the rejecter. Add is
	// called only before the loop starts, on the loop, or under joinMu
	// before joining (startReader), so every Add happens before the Wait
	// of runLoop (which comes after the loop returned) or of joinIdle.
	wg waitGroup

	// pub is the loop's published state (see view): written only by the
	// loop (and by newSession before it starts), read by anyone.
	pub   atomic.Pointer[view]
	view0 view      // the first view pub points to (newSession's)
	calls sync.Pool // of *call; see getCall
	// hintVerified: an era hint was confirmed (or re-probed). It is not
	// loop state: callers set it when a request answers for the hint.
	hintVerified atomic.Bool
	// wantStream: the legacy GET stream was asked for (see
	// WantServerMessages); later handshakes open it at once.
	wantStream atomic.Bool

	subscribed subscribedSet // legacy resources/subscribe bookkeeping; guarded by its mutex

	evq     eventQueue   // events for Config.OnEvent, on their way to the dispatcher
	lp      loopState    // owned by the loop goroutine
	pending pendingTable // requests awaiting a response; guarded by its mutex
}

// closing returns a channel closed by Close: the lifetime context's
// Done, which only Close cancels.
func (s *Session) closing() <-chan struct{} { return s.dctx.Context.Done() }

// dispatchContext is a context with dispatcherKey set to true, as
// context.WithValue would make it, stored in the Session instead of an
// allocation of its own.
type dispatchContext struct{ context.Context }

// Value returns true for dispatcherKey, else the parent's value.
func (c *dispatchContext) Value(key any) any {
	if key == (dispatcherKey{}) {
		return true
	}
	return c.Context.Value(key)
}

// view is what the loop publishes of its state for the goroutines that
// read it without a round trip: the accessors (State, Era, Err, …) and
// callers (the current connection and negotiation). The loop builds a new view at every change and stores it
// in Session.pub (see publish); a stored view is never modified. It is the
// session's one mirror of loop state, the documented exception to habit
// 15 (shared/STYLE.md).
type view struct {
	st  State
	ref *connRef  // the current connection
	neg *negState // the latest negotiation; nil before the first
	err error     // the terminal error: set with StateFailed or StateClosed, before Done is closed
	gen uint64    // completed negotiations (see Generation)
}

// publish stores a copy of the current view changed by f. It runs on the
// loop, the only writer.
func (s *Session) publish(f func(v *view)) {
	v := *s.pub.Load()
	f(&v)
	s.pub.Store(&v)
}

// connRef is one installed connection.
type connRef struct {
	conn  transport.Conn
	gen   uint64
	kind  string
	class transport.Class // the probe classifier's class (seed 003)
	// lost is set by the reader when the connection ended (its reader
	// exited), before the loop hears of it.
	lost atomic.Bool
	// tookGood: a response was taken on a writer's goroutine (see
	// Session.take) since the reader last looked: a good read, for the
	// reader's count of bad reads in a row.
	tookGood atomic.Bool
	// streamAsked: the legacy GET stream was opened on demand and has
	// answered (see Session.WantServerMessages).
	streamAsked atomic.Bool
}

// Connect opens a connection with t and negotiates the protocol era
// according to cfg. It returns a [*NegotiationError] (wrapping the typed
// cause) when negotiation fails, or the transport's error when the first
// connection cannot be made; ctx bounds the whole negotiation.
func Connect(ctx context.Context, t transport.Transport, cfg Config) (*Session, error) {
	s := newSession(ctx, t, cfg)
	if err := s.start(ctx); err != nil {
		s.Close()
		return nil, err
	}
	s.startKeepAlive()
	return s, nil
}

// defaultClientInfo is the ClientInfo of every session without one.
var defaultClientInfo = protocol.Implementation{Name: "conduit", Version: Version}

// discardLogger is the logger of every session without Config.Logger (a
// slog.Logger is immutable, so one serves them all).
var discardLogger = slog.New(slog.DiscardHandler)

func newSession(ctx context.Context, t transport.Transport, cfg Config) *Session {
	s := &Session{
		cfg: cfg,
		t:   t,
		log: cfg.Logger,
	}
	if s.log == nil {
		s.log = discardLogger
	}
	if s.cfg.Handler == nil {
		s.cfg.Handler = new(handler.Set)
	}
	if s.cfg.ProbeTimeout <= 0 {
		s.cfg.ProbeTimeout = DefaultProbeTimeout
	}
	if s.cfg.MaxInputRounds <= 0 {
		s.cfg.MaxInputRounds = DefaultMaxInputRounds
	}
	if s.cfg.ClientInfo == nil || s.cfg.ClientInfo.Name == "" {
		s.cfg.ClientInfo = &defaultClientInfo
	}
	mo := cfg.CapabilityOptions
	mo.Era = negotiation.EraModern
	s.modernCaps = negotiation.CapabilitiesOf(*s.cfg.Handler, mo)
	lo := cfg.CapabilityOptions
	lo.Era = negotiation.EraLegacy
	s.legacyCaps = negotiation.CapabilitiesOf(*s.cfg.Handler, lo)
	if cfg.ExtraCapabilities != nil {
		cfg.ExtraCapabilities(&s.modernCaps)
		cfg.ExtraCapabilities(&s.legacyCaps)
	}
	// The connection-lifetime context keeps ctx's values but not its
	// cancellation (Connect's ctx bounds only the negotiation); Close
	// cancels it.
	s.dctx.Context, s.lifeCancel = context.WithCancel(context.WithoutCancel(ctx))
	s.pending.init()
	// The first view lives in the Session (one allocation less per
	// connect); like every stored view, it is never modified.
	s.view0 = view{}
	s.pub.Store(&s.view0)
	s.wg.s = s // fires sigJoined at joinIdle's closeAtZero
	return s
}

// Reconnected returns a channel that is closed when the session next
// completes a re-negotiation: after a lost connection was restored (a
// respawned stdio server, a new WebSocket or HTTP connection), after a
// legacy HTTP session expired (HTTP 404) and was initialized again, or
// after an era hint proved wrong and the server was probed again. The
// server then holds no state of the previous connection (legacy
// resources/subscribe calls, for instance, must be re-sent). The channel
// is closed once the new negotiation is published (Era, ProtocolVersion
// and the server's capabilities answer for it) and calls flow again. Each
// re-negotiation closes the channel returned before it and starts a new
// one: to see every re-negotiation, take the next channel before acting
// on one:
//
//	ch := s.Reconnected()
//	for {
//		select {
//		case <-ch:
//		case <-s.Done():
//			return
//		}
//		ch = s.Reconnected()
//		restore()
//	}
//
// The channel is not closed by Close or by a failure: watch [Session.Done]
// as well.
func (s *Session) Reconnected() <-chan struct{} {
	s.reconnMu.Lock()
	defer s.reconnMu.Unlock()
	if s.reconn == nil {
		s.reconn = make(chan struct{})
	}
	return s.reconn
}

// Generation counts the negotiations the session completed: 1 once
// Connect returned, plus one for each re-negotiation (see
// [Session.Reconnected]). Two equal values mean the same server-side state
// (the same legacy session, the same process).
func (s *Session) Generation() uint64 { return s.pub.Load().gen }

// Done returns a channel closed when the session can no longer serve
// calls: after Close, or after an unrecoverable failure (see [Session.Err]).
func (s *Session) Done() <-chan struct{} { return s.wait(sigDone) }

// loopEnded returns a channel closed when the loop has returned (or, for
// a session whose loop never started, when Close played its part:
// closeIdle).
func (s *Session) loopEnded() <-chan struct{} { return s.wait(sigLoopDone) }

// Err returns the error that ended the session, [ErrClosed] after Close,
// or nil while it is usable.
func (s *Session) Err() error {
	return s.pub.Load().err
}

// State returns the current state of the session's state machine.
func (s *Session) State() State { return s.pub.Load().st }

// The server's capabilities, identity and instructions are those of the
// discover result (modern) or the initialize result (legacy), read where
// they are rather than copied.

// caps returns the server's capabilities (the zero value when n has
// neither result).
func (n *negState) caps() *protocol.ServerCapabilities {
	switch {
	case n.discover != nil:
		return &n.discover.Capabilities
	case n.init != nil:
		return &n.init.Capabilities
	}
	return &protocol.ServerCapabilities{}
}

// serverInfo returns the server's identity, or nil when it did not say.
func (n *negState) serverInfo() *protocol.Implementation {
	switch {
	case n.discover != nil:
		return n.discover.ServerInfo
	case n.init != nil:
		return &n.init.ServerInfo
	}
	return nil
}

// instructions returns the server's instructions, or "".
func (n *negState) instructions() string {
	switch {
	case n.discover != nil:
		return n.discover.Instructions
	case n.init != nil:
		return n.init.Instructions
	}
	return ""
}

func (s *Session) negState() *negState {
	if n := s.pub.Load().neg; n != nil {
		return n
	}
	return &negState{}
}

// Era returns the negotiated era.
func (s *Session) Era() negotiation.Era { return s.negState().era }

// ProtocolVersion returns the negotiated protocol version.
func (s *Session) ProtocolVersion() string { return s.negState().version }

// Discover returns the server/discover result (modern); nil in the legacy
// era, or when the era came from a hint without [Config.DiscoverHint].
func (s *Session) Discover() *negotiation.DiscoverResult { return s.negState().discover }

// InitializeResult returns the initialize result (legacy); nil in the
// modern era.
func (s *Session) InitializeResult() *protocol.InitializeResult { return s.negState().init }

// ServerInfo returns the server's identity, or nil when it did not say.
func (s *Session) ServerInfo() *protocol.Implementation { return s.negState().serverInfo() }

// Instructions returns the server's instructions, or "".
func (s *Session) Instructions() string { return s.negState().instructions() }

// ServerCapabilities returns the server's capabilities.
func (s *Session) ServerCapabilities() protocol.ServerCapabilities { return *s.negState().caps() }

// ClientCapabilities returns the capabilities advertised in the negotiated
// era.
func (s *Session) ClientCapabilities() protocol.ClientCapabilities {
	if s.negState().era == negotiation.EraLegacy {
		return s.legacyCaps
	}
	return s.modernCaps
}

// Trace returns the negotiation steps taken so far, including those of
// re-negotiations after a lost connection.
func (s *Session) Trace() []TraceStep {
	return append([]TraceStep(nil), s.negState().trace...)
}

// TransportKind returns the kind of the current connection ("stdio",
// "http", "websocket", "sse", "memory"), as reported by
// [transport.Kinder]; "memory" when the connection does not say.
func (s *Session) TransportKind() string {
	if r := s.pub.Load().ref; r != nil {
		return r.kind
	}
	return ""
}
