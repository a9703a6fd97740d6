package engine

import (
	"errors"
	"net"
	"net/http"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// ReplayPolicy says which requests lost with their connection, response
// stream or legacy HTTP session are sent again automatically (once, under
// a new id). A request that may have been executed by the server and is
// not replayed fails with an error matching [ErrOutcomeUnknown].
type ReplayPolicy uint8

const (
	// ReplayDefault, in [CallOptions], takes [Config.Replay]; in
	// [Config], it is [ReplaySafe].
	ReplayDefault ReplayPolicy = iota
	// ReplaySafe re-sends only what cannot run twice: a request the
	// server provably never received (a legacy HTTP 404 for an expired
	// session, a connection closed before the request was written), a
	// method read-only by protocol (see [ReadOnlyMethod]), or a request
	// the caller declared idempotent ([CallOptions.Idempotent], for a tool
	// annotated readOnlyHint or idempotentHint).
	ReplaySafe
	// ReplayAll re-sends every lost request once (the literal reading of
	// the 2026-07-28 rule that a request lost with its stream is sent
	// again as a new request).
	ReplayAll
	// ReplayNone re-sends nothing.
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

// retryHTTP decides whether a request that failed with err, a retryable
// HTTP status he (408, 429, 5xx), is sent again, and returns the error for the
// caller when it is not. 408, 429 and 503 say that the server (or a proxy
// in front of it) did not take the request: they are retried unless the
// policy is [ReplayNone]. 500, 502, 504 and the other 5xx do not: the
// server, or the server behind a gateway, may have executed it, so under
// [ReplaySafe] only a request that cannot run twice is retried, and any
// other fails with an error matching [ErrOutcomeUnknown] (reported as
// [EventReplayRefused]).
func (s *Session) retryHTTP(method string, o *CallOptions, he *transport.HTTPError, err error) (bool, error) {
	untaken := untakenStatus(he.StatusCode)
	p := s.policy(o)
	switch {
	case p == ReplayNone:
	case untaken, p == ReplayAll, o.Idempotent, ReadOnlyMethod(method):
		return true, nil
	}
	if untaken {
		return false, err
	}
	s.log.Info("not retrying a request that the server may have executed", "method", method, "status", he.StatusCode, "policy", p)
	s.emit(Event{Kind: EventReplayRefused, Method: method, Err: err})
	return false, &OutcomeUnknownError{Method: method, Err: err}
}

// untakenStatus reports an HTTP status by which the server says it did
// not take the request: 408 Request Timeout (it did not receive all of
// it), 429 Too Many Requests and 503 Service Unavailable (it refused it).
func untakenStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// replayLost decides whether a request lost with err (an error matching
// [ErrConnectionLost]) is sent again, reports the decision as an event,
// and returns the error for the caller when it is not: err itself when
// the server provably never got the request, else an error that also
// matches [ErrOutcomeUnknown].
func (s *Session) replayLost(method string, o *CallOptions, err error) (bool, error) {
	unsent := neverReceived(err)
	p := s.policy(o)
	replay := false
	switch p {
	case ReplayAll:
		replay = true
	case ReplaySafe:
		replay = unsent || o.Idempotent || ReadOnlyMethod(method)
	}
	if replay {
		s.log.Info("re-sending a request lost with its connection", "method", method, "err", err)
		s.emit(Event{Kind: EventReplayed, Method: method, Err: err})
		return true, nil
	}
	if unsent {
		return false, err
	}
	s.log.Info("not re-sending a request that the server may have executed", "method", method, "policy", p, "err", err)
	s.emit(Event{Kind: EventReplayRefused, Method: method, Err: err})
	return false, &OutcomeUnknownError{Method: method, Err: err}
}

// neverReceived reports whether the request lost with err provably never
// reached the server: its legacy HTTP session had expired (HTTP 404), or
// the connection was closed before the request was written.
func neverReceived(err error) bool {
	cl, ok := errors.AsType[*ConnectionLostError](err)
	if !ok {
		return false
	}
	return cl.Unsent || errors.Is(cl.Err, transport.ErrSessionExpired)
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
	switch {
	case errors.Is(err, transport.ErrSessionExpired):
		// Legacy HTTP 404 with a session id: re-initialize, then replay
		// (the server did not take the request).
		s.postHeal(c.ref, err, false)
		return nil, &ConnectionLostError{Method: c.method, Err: err, Unsent: true}
	case errors.Is(err, transport.ErrStreamBroken):
		return nil, &ConnectionLostError{Method: c.method, Err: err}
	case errors.Is(err, transport.ErrClosed):
		// The connection was closed before the request was written.
		s.postHeal(c.ref, err, false)
		return nil, &ConnectionLostError{Method: c.method, Err: err, Unsent: true}
	}
	if _, ok := errors.AsType[*transport.NetworkError](err); ok {
		if !perRequest(c.ref.kind) {
			// A stream connection (WebSocket) that broke under the write.
			s.postHeal(c.ref, err, false)
			return nil, &ConnectionLostError{Method: c.method, Err: err}
		}
		if !dialFailed(err) {
			// A POST whose connection broke after the request may have
			// been written (a reset, no answer in time): the server may
			// have run it. The next POST needs no healing.
			return nil, &ConnectionLostError{Method: c.method, Err: err}
		}
	}
	return nil, err
}

// dialFailed reports a network error from before a request could be
// written: the connection could not be made (refused, unreachable, a
// name that does not resolve).
func dialFailed(err error) bool {
	if oe, ok := errors.AsType[*net.OpError](err); ok && oe.Op == "dial" {
		return true
	}
	_, ok := errors.AsType[*net.DNSError](err)
	return ok
}
