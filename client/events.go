package client

import (
	"log/slog"
	"time"

	"github.com/conduitmcp/conduit/internal/engine"
)

// ConnEvent is one thing that happened to a client's connection that a
// host may want to know, log or count. Kind is one of these stable names:
//
//   - "era-pinned": negotiation finished; Version is the pinned version
//     (again after every re-negotiation).
//   - "retried": a transient failure (HTTP 408/429/5xx, a network error, a
//     probe timeout on HTTP) is being retried; Err is the cause.
//   - "reinitialized": a legacy session was initialized again (an expired
//     HTTP session, a re-negotiation after a lost connection).
//   - "respawned": the stdio server process was started again.
//   - "relistened": a dropped subscriptions/listen stream was opened again.
//   - "replayed": a request lost with its connection was sent again
//     (see [ReplayPolicy]); Method names it, Err the loss, Reason the
//     evidence and the policy that decided, in words.
//   - "replay-refused": such a request was not sent again; its caller got
//     an error matching [ErrOutcomeUnknown]; Reason says why, e.g. "the
//     stdio process exited after the request was written; not sent
//     again: tool add was never listed and listing the tools failed …".
//   - "input-round": a modern input_required round was answered.
//   - "dropped": messages were dropped or coalesced under load; Count says
//     how many, Method which.
//   - "keepalive-timeout": a keepalive request went unanswered (see
//     [RetryPolicy.KeepAlive]) and the connection is being healed;
//     Method names it, Err says so.
//
// New kinds may be added; a kind is never renamed.
type ConnEvent struct {
	Kind    string
	Time    time.Time
	Version string // the protocol version in force, when known
	Method  string // the request or notification concerned, if any
	Count   int    // "dropped": how many
	Err     error  // the cause, if any
	// Reason is, for "replayed", "replay-refused" and "retried", the
	// evidence that decided, in words.
	Reason string
}

// LogValue makes a ConnEvent log as a group of its set fields, so that
// slog.Info("mcp", "event", ev) prints kind, version, method, count, err
// and reason.
func (e ConnEvent) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("kind", e.Kind)}
	if e.Version != "" {
		attrs = append(attrs, slog.String("version", e.Version))
	}
	if e.Method != "" {
		attrs = append(attrs, slog.String("method", e.Method))
	}
	if e.Count != 0 {
		attrs = append(attrs, slog.Int("count", e.Count))
	}
	if e.Err != nil {
		attrs = append(attrs, slog.String("err", e.Err.Error()))
	}
	if e.Reason != "" {
		attrs = append(attrs, slog.String("reason", e.Reason))
	}
	return slog.GroupValue(attrs...)
}

// WithConnEvents calls f for every [ConnEvent] of the client's connection,
// in order, from the goroutine that also delivers the server's
// notifications (never from the connection's own loop): f may log, count
// or make calls, but while it runs, notifications wait. Default: none. To
// route the events to slog:
//
//	client.WithConnEvents(func(ev client.ConnEvent) {
//		logger.Info("mcp connection", "event", ev)
//	})
func WithConnEvents(f func(ConnEvent)) Option {
	return optionFunc(func(c *config) { c.onEvent = f })
}

// connEventHook adapts f to the engine's hook.
func connEventHook(f func(ConnEvent)) func(engine.Event) {
	if f == nil {
		return nil
	}
	return func(ev engine.Event) {
		f(ConnEvent{Kind: ev.Kind.String(), Time: ev.Time, Version: ev.Version, Method: ev.Method, Count: ev.Count, Err: ev.Err, Reason: ev.Reason})
	}
}
