package client

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// Request is one MCP message passing through a [Middleware]: a request or
// a notification (a request without an answer), sent by the client or
// received from the server.
type Request struct {
	// Method is the MCP method. A middleware that changes it sends (or
	// serves) that method instead.
	Method string
	// Params are the message's params as JSON. An outgoing modern request
	// gets the protocol's _meta envelope (protocol version, client
	// capabilities and info) after the middleware, when it is sent; the
	// per-call [WithCallMeta] entries are already in. A middleware may
	// replace Params (with a JSON object) or use [Request.SetMeta].
	Params json.RawMessage
	// Incoming is false for what the client sends, true for what the
	// server sends (legacy server requests, modern MRTR input requests,
	// notifications).
	Incoming bool
	// Notification: no answer is expected (the result is nil).
	Notification bool
	// Negotiation marks server/discover, initialize and
	// notifications/initialized, at connect time and when the client
	// negotiates again (a respawned server, an expired legacy session):
	// they pass through the middleware too. ProtocolVersion is "" during
	// the first negotiation, the previous one's during a later one.
	Negotiation bool
	// Fallback marks the server/discover probe of an [Auto] negotiation,
	// which falls back to initialize when the answer is legacy evidence
	// (a -32601, and the other legacy rows of negotiation.ClassifyProbe): that
	// answer comes back from next as an error, but it is the expected way
	// to find a legacy server, not a failure. False for a probe that
	// cannot fall back ([Modern], a pinned version).
	Fallback bool
	// ID is the JSON-RPC id. For an outgoing request the engine assigns it
	// when it sends the request, so it is set once next returns (after
	// replays, retries and MRTR rounds, the last request's). For an
	// incoming legacy request it is the server's. An MRTR input request is
	// not a JSON-RPC request and has no id (ID is the zero ID): see
	// InputKey.
	ID jsonrpc.ID
	// InputKey is the key of an incoming MRTR input request in the
	// inputRequests of the result that asked for it (or the elicitationId
	// of a URL elicitation a -32042 error asked for); "" elsewhere.
	InputKey string
	// ProtocolVersion, SessionID, Transport and ServerAddress describe the
	// connection when the message passed: the negotiated version, the
	// legacy Streamable HTTP session id ("" elsewhere), the transport kind
	// ("stdio", "http", "websocket", "sse", "memory"), the server's URL
	// for the network transports ([Dial]'s endpoint or the transport's
	// URL; "" for stdio and in-memory connections).
	ProtocolVersion string
	SessionID       string
	Transport       string
	ServerAddress   string
	// OnAttempt, when a middleware sets it on an outgoing request before
	// calling next, is called on the caller's goroutine before each
	// further attempt sent for this request: why is "replay" (the request
	// was lost with its connection, stream or session), "retry" (HTTP
	// 408, 429, 5xx), "reauthorize" (HTTP 401/403), "reprobe" (a
	// remembered era proved wrong) or "input-round" (a modern MRTR round);
	// prev is the id of the attempt before. The MRTR input requests
	// themselves pass through the middleware as Incoming requests, with the
	// context the call's next was given.
	OnAttempt func(why string, prev jsonrpc.ID)

	em   *engine.Message
	next engine.Invoker
}

// Invoker sends or serves one [Request]: it returns the result of a
// request (the raw JSON of the final result; nil for a notification) or
// its error, as the caller or the server will see it.
type Invoker func(ctx context.Context, req *Request) (json.RawMessage, error)

// Middleware wraps an [Invoker], the way an http.RoundTripper wraps
// another: it may look at or change the request, call next (at most once),
// and look at or change the result or the error. See [WithMiddleware].
type Middleware func(next Invoker) Invoker

// WithMiddleware wraps every MCP message the client sends or receives, in
// both eras, on every transport, at the protocol level: every request
// (typed calls, [Client.Call], listings, pings; one invocation covers the
// request's replays, retries and MRTR rounds) and notification
// ([Client.Notify], notifications/cancelled), the negotiation's requests
// (Request.Negotiation), the server's requests before the handler serves
// them (legacy sampling, elicitation, roots and ping; modern MRTR input
// requests) and the server's notifications before the listeners see them
// (on the dispatcher goroutine, progress included; those of a modern
// subscriptions/listen stream on the [Subscription]'s goroutine, before it
// makes them events). The subscriptions/listen request itself, a stream
// that lasts as long as its subscription, passes only [WithMessageLog].
// The first middleware given is the outermost; a
// later WithMiddleware adds to the earlier ones. Default: none.
//
// A middleware runs on the caller's goroutine (the handler's for incoming
// requests, the dispatcher's for incoming notifications). It must return
// next's error as it is or wrapped, so that callers can still match it.
//
// [WithMessageLog] and [WithWireLog] sit lower, at the engine's single
// read and write points: they see the JSON-RPC messages as sent (with
// the _meta envelope, every attempt, every response), while a middleware
// sees one MCP operation and its outcome.
func WithMiddleware(mw ...Middleware) Option {
	mw = append([]Middleware(nil), mw...)
	return optionFunc(func(c *config) { c.middleware = append(c.middleware, mw...) })
}

// Meta returns the params._meta entry key, if there is one.
func (r *Request) Meta(key string) (json.RawMessage, bool) {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(r.Params) == 0 || json.Unmarshal(r.Params, &p) != nil {
		return nil, false
	}
	v, ok := p.Meta[key]
	return v, ok
}

// SetMeta sets the params._meta entry key to value (JSON-encoded; a
// json.RawMessage as it is), creating _meta when needed; a nil value
// removes the entry. The keys the protocol's envelope uses (protocol
// version, client capabilities and info, logLevel, progressToken) are
// refused: the engine sets them.
func (r *Request) SetMeta(key string, value any) error {
	var raw json.RawMessage
	if value != nil {
		b, err := json.Marshal(value)
		if err != nil {
			return fmt.Errorf("client: encoding _meta %q: %w", key, err)
		}
		raw = b
	}
	p, err := engine.MergeMeta(r.Params, map[string]json.RawMessage{key: raw})
	if err != nil {
		return fmt.Errorf("client: setting _meta %q: %w", key, err)
	}
	r.Params = p
	return nil
}

// chainMiddleware builds the engine's middleware hook from mws, or nil.
// The chain of Invokers is built once; each message carries the engine's
// next in its Request.
func chainMiddleware(mws []Middleware, addr string) func(context.Context, *engine.Message, engine.Invoker) (json.RawMessage, error) {
	if len(mws) == 0 {
		return nil
	}
	inv := Invoker(func(ctx context.Context, r *Request) (json.RawMessage, error) {
		em := r.em
		if em == nil {
			return nil, fmt.Errorf("client: a middleware passed a Request it did not get")
		}
		em.Method, em.Params, em.OnAttempt = r.Method, r.Params, r.OnAttempt
		raw, err := r.next(ctx, em)
		r.ID = em.ID
		return raw, err
	})
	for i := len(mws) - 1; i >= 0; i-- {
		if mws[i] != nil {
			inv = mws[i](inv)
		}
	}
	return func(ctx context.Context, m *engine.Message, next engine.Invoker) (json.RawMessage, error) {
		r := &Request{
			Method: m.Method, Params: m.Params, Incoming: m.Incoming,
			Notification: m.Notification, Negotiation: m.Negotiation, Fallback: m.Fallback,
			ID: m.ID, InputKey: m.InputKey,
			ProtocolVersion: m.Version, SessionID: m.SessionID, Transport: m.Transport,
			ServerAddress: addr, em: m, next: next,
		}
		return inv(ctx, r)
	}
}

// serverAddress is the server's URL for the network transports.
func serverAddress(t transport.Transport, endpoint string) string {
	if endpoint != "" {
		return endpoint
	}
	switch t := t.(type) {
	case *transport.StreamableHTTP:
		return t.URL
	case *transport.SSE:
		return t.URL
	case *transport.WebSocket:
		return t.URL
	}
	return ""
}

// streamNote passes a notification of a subscriptions/listen stream
// through the middleware (on the subscription's goroutine); deliver
// handles what the middleware passed on.
func (c *Client) streamNote(ctx context.Context, n *jsonrpc.Request, deliver func(*jsonrpc.Request)) {
	if c.mw == nil {
		deliver(n)
		return
	}
	m := &engine.Message{Method: n.Method, Params: n.Params, Incoming: true, Notification: true,
		Version: c.sess.ProtocolVersion(), Transport: c.kind}
	_, err := c.mw(ctx, m, func(_ context.Context, m *engine.Message) (json.RawMessage, error) {
		deliver(&jsonrpc.Request{Method: m.Method, Params: m.Params})
		return nil, nil
	})
	if err != nil {
		c.cfg.logger.Debug("conduit: a middleware refused a notification", "method", n.Method, "err", err)
	}
}
