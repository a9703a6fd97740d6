package engine

import (
	"errors"
	"net"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// ReplayPolicy says which requests that may have run without an answer
// (possibly delivered: see "The outcome rule" in the package doc) are
// sent again automatically, once, under a new id. Such a request that is
// not replayed, and a replay that is lost too, fails with an error
// matching [ErrOutcomeUnknown]. A request no server saw (not written,
// refused) is sent again after the heal under every policy (408, 429 and
// 503 not under ReplayNone).
type ReplayPolicy uint8

const (
	// ReplayDefault, in [CallOptions], takes [Config.Replay]; in
	// [Config], it is [ReplaySafe].
	ReplayDefault ReplayPolicy = iota
	// ReplaySafe replays only what cannot run twice: a method read-only
	// by protocol (see [ReadOnlyMethod]), a request the caller declared
	// idempotent ([CallOptions.Idempotent]), or one [CallOptions.Safety]
	// says is safe (a tool annotated readOnlyHint or idempotentHint).
	ReplaySafe
	// ReplayAll replays every request that may have run, once (the
	// literal reading of the 2026-07-28 rule that a request lost with its
	// stream is sent again as a new request).
	ReplayAll
	// ReplayNone replays nothing that may have run.
	ReplayNone
)

// String returns "default", "safe", "all" or "none".
func (p ReplayPolicy) String() string {
	switch p {
	case ReplayDefault:
		return "default"
	case ReplaySafe:
		return "safe"
	case ReplayAll:
		return "all"
	case ReplayNone:
		return "none"
	}
	return "unknown"
}

// ReadOnlyMethod reports whether method is read-only (or idempotent) by
// protocol, so that sending it twice cannot do harm: the listings, gets
// and reads, server/discover, ping, completion, (un)subscribing and
// listening, setting the log level, and the tasks queries.
func ReadOnlyMethod(method string) bool {
	switch method {
	case protocol.MethodPing, protocol.MethodDiscover, protocol.MethodToolsList, protocol.MethodPromptsList,
		protocol.MethodPromptsGet, protocol.MethodResourcesList, protocol.MethodResourcesTemplateList,
		protocol.MethodResourcesRead, protocol.MethodResourcesSubscribe, protocol.MethodResourcesUnsubscribe,
		protocol.MethodSubscriptionsListen, protocol.MethodCompletionComplete, protocol.MethodLoggingSetLevel,
		protocol.MethodTasksGet, protocol.MethodTasksList, protocol.MethodTasksResult:
		return true
	}
	return false
}

// policy is the replay policy in force for one call.
func (s *Session) policy(o *CallOptions) ReplayPolicy {
	p := o.Replay
	if p == ReplayDefault {
		p = s.cfg.Replay
	}
	if p == ReplayDefault {
		p = ReplaySafe
	}
	return p
}

// writeFailed classifies a failed Write.
func (s *Session) writeFailed(c *call, err error) (*jsonrpc.Response, error) {
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && !he.SessionExpired && !authStatus(he.StatusCode) &&
		he.Response != nil && he.Response.Error != nil && !s.hintSuspect(c, nil, err) {
		// An HTTP error status with a JSON-RPC error body (a modern
		// server's 400 for -32021/-32022, 404 for -32601): the server's
		// answer.
		return he.Response, nil
	}
	_, netErr := errors.AsType[*transport.NetworkError](err)
	switch {
	case errors.Is(err, transport.ErrSessionExpired):
		// Legacy HTTP 404 with a session id: re-initialize, then replay
		// (the server did not take the request).
		s.postHeal(c.ref, err, false)
		return nil, &ConnectionLostError{Method: c.method, Err: err, Unsent: true}
	case errors.Is(err, transport.ErrStreamBroken):
		return nil, &ConnectionLostError{Method: c.method, Err: err}
	case errors.Is(err, transport.ErrClosed) && !netErr:
		// The connection was closed before the request was written (a
		// POST that was in flight is a *transport.NetworkError).
		s.postHeal(c.ref, err, false)
		return nil, &ConnectionLostError{Method: c.method, Err: err, Unsent: true}
	}
	if netErr {
		if !perRequest(c.ref.kind) {
			// A stream connection (WebSocket; a line-framed stream cut
			// after all of the message) that broke under the write.
			s.postHeal(c.ref, err, false)
			return nil, &ConnectionLostError{Method: c.method, Err: err}
		}
		if dialFailed(err) {
			// No connection, no server saw the request.
			return nil, &ConnectionLostError{Method: c.method, Err: err, Unsent: true, Reason: "the connection to the server could not be made"}
		}
		// A POST whose connection broke after the request may have been
		// written (a reset, no answer in time): the server may have run
		// it. The next POST needs no healing.
		return nil, &ConnectionLostError{Method: c.method, Err: err}
	}
	return nil, err
}

// dialFailed reports a network error from before a request could be
// written: the connection could not be made (refused, unreachable, a
// name that does not resolve, or any failure of a POST before its body
// was sent: transport.NetworkError.Unsent).
func dialFailed(err error) bool {
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return true
	}
	if ne, ok := errors.AsType[*transport.NetworkError](err); ok && ne.Unsent {
		return true
	}
	_, ok := errors.AsType[*net.DNSError](err)
	return ok
}
