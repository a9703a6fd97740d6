package client

import (
	"github.com/conduitmcp/conduit/internal/engine"
)

// ReplayPolicy says which requests that may have run without an answer
// are sent again automatically, once, on the healed connection: requests
// written and then lost with their connection (a stdio server that died,
// a WebSocket that broke, an HTTP POST whose connection broke after the
// request was written), with their response stream (whatever a legacy
// resumption GET said afterwards), or answered HTTP 500, 502, 504 or
// another 5xx that does not say the request was not taken. Such a
// request that is not sent again fails with an [*Error] matching
// [ErrOutcomeUnknown]; so does a replay that is lost too, whatever the
// policy ("2 attempts may have run"). The connection still heals, so the
// next call works.
//
// A request no server saw is sent again under every policy, after the
// heal: one never written (held while the connection healed, or the
// connection closed before the write) or refused (a legacy HTTP 404 for
// an expired session, to its own POST); 408, 429 and 503, which say the
// request was not taken, are retried within [RetryPolicy] unless the
// policy is ReplayNone. When it cannot be sent (the heal failed, the
// dial was refused) it fails with an [*Error] matching [ErrNotSent],
// never [ErrOutcomeUnknown]. The rule, and the words each decision
// reports in [ConnEvent.Reason], are in internal/engine/outcome.go.
type ReplayPolicy int

const (
	// ReplaySafe, the default, replays only what cannot run twice: a
	// method read-only by protocol (the listings, gets and reads,
	// server/discover, ping, completion, subscribing and listening,
	// logging/setLevel, the tasks queries), and a tools/call of a tool
	// whose annotations say readOnlyHint or idempotentHint true. A tool
	// the client has not listed (or whose list changed since) is looked
	// up with one tools/list walk when the decision needs it: after the
	// heal, on the caller's goroutine, bounded by the call's context; a
	// call that is not lost never pays for it, and the listing is kept
	// until the next tools list_changed notification.
	ReplaySafe ReplayPolicy = iota
	// ReplayAll replays every request that may have run, once (the
	// literal reading of the 2026-07-28 rule that a request lost with its
	// stream is sent again as a new request): a tool may then run twice.
	ReplayAll
	// ReplayNone replays nothing that may have run, and does not retry
	// 408, 429 or 503; a request no server saw is still sent again after
	// the heal.
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
