package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Message is one MCP request or notification passing through
// [Config.Middleware]: an outgoing one before the engine sends it, an
// incoming one before the handler serves it.
type Message struct {
	Method string
	// Params are the message's params: for an outgoing modern request
	// without the engine's _meta envelope, which is added when it is sent.
	// A middleware may replace them (they must stay a JSON object or be
	// empty).
	Params       json.RawMessage
	Incoming     bool // from the server
	Notification bool // no answer expected
	Negotiation  bool // server/discover, initialize, notifications/initialized
	// Fallback marks the server/discover probe of a negotiation that falls
	// back to initialize on legacy evidence (the Auto mode): a legacy
	// answer to it is the expected fallback, not a failure.
	Fallback bool
	// ID is the JSON-RPC id: of an outgoing request, set by the engine when
	// it sends it (the last attempt's after replays, retries and MRTR
	// rounds); of an incoming legacy request, the server's. An MRTR input
	// request has none (it is not a JSON-RPC request): see InputKey.
	ID jsonrpc.ID
	// InputKey is an MRTR input request's key in inputRequests (or the
	// elicitationId of a URL elicitation a -32042 error asked for).
	InputKey string
	// Version, SessionID and Transport are the connection's facts when the
	// message passed: the negotiated protocol version ("" during
	// negotiation), the legacy Streamable HTTP session id (or ""), the
	// transport kind.
	Version   string
	SessionID string
	Transport string
	// OnAttempt, when a middleware sets it on an outgoing request before
	// next, is called on the caller's goroutine before each further
	// attempt the engine sends for it: why is "replay" (lost with its
	// connection, stream or session), "retry" (HTTP 408/429/5xx),
	// "reauthorize" (401/403), "reprobe" (an era hint proved wrong) or
	// "input-round" (an MRTR round); prev is the id of the attempt before.
	OnAttempt func(why string, prev jsonrpc.ID)
}

// Invoker sends or serves one message; it returns the result of a request
// (nil for a notification) or the error.
type Invoker func(ctx context.Context, m *Message) (json.RawMessage, error)

// facts fills m's connection facts from the published state.
func (s *Session) facts(m *Message) *Message {
	v := s.pub.Load()
	if v.neg != nil {
		m.Version = v.neg.version
	}
	if v.ref != nil {
		m.Transport = v.ref.kind
		if si, ok := v.ref.conn.(transport.SessionIDer); ok {
			m.SessionID = si.SessionID()
		}
	}
	return m
}

// through runs next for m through Config.Middleware (or directly without
// one).
func (s *Session) through(ctx context.Context, m *Message, next Invoker) (json.RawMessage, error) {
	if s.cfg.Middleware == nil {
		return next(ctx, m)
	}
	return s.cfg.Middleware(ctx, s.facts(m), next)
}

// callThrough is Call with a middleware: the middleware sees the params
// (with the per-call _meta entries) and, after next, the request's id.
func (s *Session) callThrough(ctx context.Context, method string, raw json.RawMessage, o *CallOptions) (json.RawMessage, error) {
	m := &Message{Method: method, Params: raw}
	return s.through(ctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		if err := validParams(m.Params); err != nil {
			return nil, fmt.Errorf("params from a middleware: %w", err)
		}
		oc := *o
		oc.sent, oc.onAttempt = &m.ID, m.OnAttempt
		return s.call(ctx, m.Method, m.Params, &oc)
	})
}

// noteThrough sends the notification method with params through the
// middleware; write sends the (possibly changed) params.
func (s *Session) noteThrough(ctx context.Context, method string, params json.RawMessage, negotiation bool, write func(context.Context, string, json.RawMessage) error) error {
	if s.cfg.Middleware == nil {
		return write(ctx, method, params)
	}
	m := &Message{Method: method, Params: params, Notification: true, Negotiation: negotiation}
	_, err := s.through(ctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		if err := validParams(m.Params); err != nil {
			return nil, fmt.Errorf("params from a middleware: %w", err)
		}
		return nil, write(ctx, m.Method, m.Params)
	})
	return err
}

// serveThrough serves an incoming request (legacy server request or MRTR
// input request) through the middleware.
func (s *Session) serveThrough(ctx context.Context, key string, method string, params json.RawMessage, caps protocol.ClientCapabilities) (json.RawMessage, error) {
	if s.cfg.Middleware == nil {
		return s.invoke(ctx, method, params, caps)
	}
	m := &Message{Method: method, Params: params, Incoming: true, InputKey: key}
	return s.through(ctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		return s.invoke(ctx, m.Method, m.Params, caps)
	})
}

// noteIn delivers an incoming notification through the middleware, on the
// dispatcher goroutine; deliver gets the context and params the middleware
// passed on.
func (s *Session) noteIn(n *jsonrpc.Request, deliver func(context.Context, *jsonrpc.Request)) {
	if s.cfg.Middleware == nil {
		deliver(&s.dctx, n)
		return
	}
	m := &Message{Method: n.Method, Params: n.Params, Incoming: true, Notification: true}
	_, err := s.through(&s.dctx, m, func(ctx context.Context, m *Message) (json.RawMessage, error) {
		if !onDispatcher(ctx) {
			// A middleware that replaced the context: keep the mark, so
			// that a listener's own call does not wait for the dispatcher.
			ctx = context.WithValue(ctx, dispatcherKey{}, true)
		}
		deliver(ctx, &jsonrpc.Request{Method: m.Method, Params: m.Params})
		return nil, nil
	})
	if err != nil {
		s.log.Debug("a middleware refused a notification", "method", n.Method, "err", err)
	}
}

func validParams(p json.RawMessage) error {
	if len(p) > 0 && !json.Valid(p) {
		return errMalformedJSON
	}
	return nil
}

// reservedMeta are the _meta keys the engine owns: the modern envelope,
// the log level and the progress token.
var reservedMeta = map[string]bool{
	protocol.MetaProtocolVersion:    true,
	protocol.MetaClientCapabilities: true,
	protocol.MetaClientInfo:         true,
	protocol.MetaLogLevel:           true,
	protocol.MetaProgressToken:      true,
}

// ErrReservedMeta is returned for a _meta entry whose key the engine owns
// (the modern envelope's protocol version, capabilities and client info,
// logLevel, progressToken).
var ErrReservedMeta = errors.New("the _meta key is reserved for the protocol")

// ReservedMeta reports whether key is one the engine sets itself.
func ReservedMeta(key string) bool { return reservedMeta[key] }

// MergeMeta returns params (a JSON object, or empty) with the entries set
// in its _meta object (created when missing); an entry with a nil value is
// removed. Keys the engine owns fail with [ErrReservedMeta].
func MergeMeta(params json.RawMessage, entries map[string]json.RawMessage) (json.RawMessage, error) {
	if len(entries) == 0 {
		return params, nil
	}
	for k := range entries {
		if reservedMeta[k] {
			return nil, fmt.Errorf("%w: %q", ErrReservedMeta, k)
		}
	}
	obj := map[string]json.RawMessage{}
	if len(params) > 0 && string(params) != "null" {
		if err := json.Unmarshal(params, &obj); err != nil || obj == nil {
			return nil, errParamsNotObject
		}
	}
	meta := map[string]json.RawMessage{}
	if m, ok := obj["_meta"]; ok && string(m) != "null" {
		if err := json.Unmarshal(m, &meta); err != nil || meta == nil {
			return nil, errMetaNotObject
		}
	}
	for k, v := range entries {
		if v == nil {
			delete(meta, k)
			continue
		}
		meta[k] = v
	}
	mb, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	obj["_meta"] = mb
	return json.Marshal(obj)
}
