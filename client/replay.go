package client

import (
	"github.com/conduitmcp/conduit/internal/engine"
)

// ReplayPolicy says which requests lost with their connection (a stdio
// server that died, a broken response stream, an HTTP POST whose
// connection broke after the request was written, an expired legacy HTTP
// session) are sent again automatically, once, on the healed connection.
// A request that is not replayed and that the server may have executed
// fails with an [*Error] matching [ErrOutcomeUnknown]; the connection
// still heals, so the next call works.
//
// The same policy governs the retries of requests an HTTP server answered
// with a transient status: 408, 429 and 503 say that the request was not
// taken, and are retried (within [RetryPolicy]) unless the policy is
// ReplayNone; 500, 502, 504 and the other 5xx do not say so, and are
// retried only as a lost request would be replayed (otherwise the call
// fails with the *Error of kind [KindHTTP] matching [ErrOutcomeUnknown]).
type ReplayPolicy int

const (
	// ReplaySafe, the default, re-sends only what cannot run twice: a
	// request the server provably never received (a legacy HTTP 404 for an
	// expired session, a connection closed before the request was
	// written), a method read-only by protocol (the listings, gets and
	// reads, server/discover, ping, completion, subscribing and listening,
	// logging/setLevel, the tasks queries), and a tools/call of a tool
	// whose last-listed annotations say readOnlyHint or idempotentHint
	// true.
	ReplaySafe ReplayPolicy = iota
	// ReplayAll re-sends every lost request once (the literal reading of
	// the 2026-07-28 rule that a request lost with its stream is sent
	// again as a new request): a tool may then run twice.
	ReplayAll
	// ReplayNone re-sends nothing.
	ReplayNone
)

func (p ReplayPolicy) engine() engine.ReplayPolicy {
	switch p {
	case ReplayAll:
		return engine.ReplayAll
	case ReplayNone:
		return engine.ReplayNone
	}
	return engine.ReplaySafe
}

// WithReplay sets this call's [ReplayPolicy]; given to
// [WithCallDefaults], every call's. Default: [ReplaySafe].
func WithReplay(p ReplayPolicy) CallOption {
	return callOptionFunc(func(c *callConfig) { c.replay = p.engine() })
}

// WithReplayed marks a result obtained through a replay: *replayed is set
// to false when the call starts and to true when the request was sent
// again after it was lost, so that the result (or error) returned came
// from the replay. replayed must stay valid until the call returns; it is
// written on the caller's goroutine. Every replay made or refused is also
// reported to [WithConnEvents].
func WithReplayed(replayed *bool) CallOption {
	return callOptionFunc(func(c *callConfig) { c.replayed = replayed })
}
