package client

import (
	"errors"
	"time"

	"github.com/conduitmcp/conduit/internal/engine"
)

// TraceStep is one step of the era negotiation, for diagnostics (see
// [Negotiation.Trace] and [Error.Trace]).
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

func traceOf(steps []engine.TraceStep) []TraceStep {
	if steps == nil {
		return nil
	}
	out := make([]TraceStep, len(steps))
	for i, s := range steps {
		out[i] = TraceStep(s)
	}
	return out
}

// negotiationTrace returns the trace of a failed negotiation in err's
// chain, or nil.
func negotiationTrace(err error) []TraceStep {
	if ne, ok := errors.AsType[*engine.NegotiationError](err); ok {
		return traceOf(ne.Trace)
	}
	return nil
}

// RetryPolicy bounds the retries of transient failures (HTTP 408, 429,
// 5xx, network errors and probe timeouts off stdio) and how long an era
// probe waits. Zero fields take the defaults noted; a negative
// MaxAttempts disables retries.
type RetryPolicy struct {
	// MaxAttempts is the total number of attempts; 0 means 5.
	MaxAttempts int
	// InitialInterval is the first wait; 0 means 200ms.
	InitialInterval time.Duration
	// MaxInterval caps each wait; 0 means 5s.
	MaxInterval time.Duration
	// MaxElapsed caps the total time spent retrying; 0 means 30s.
	MaxElapsed time.Duration
	// ProbeTimeout is how long one era probe (the server/discover of
	// [Auto]) waits for its answer; 0 or negative means 5s. A probe that
	// times out means legacy on a command transport (a stdio server that
	// ignores an unknown method) and is retried on every other one.
	ProbeTimeout time.Duration

	// KeepAlive turns on the keepalive: while the connection is ready the
	// client sends ping (legacy) or server/discover (modern) every
	// KeepAlive, and a peer that leaves one unanswered for
	// KeepAliveTimeout (0 or negative: KeepAlive) counts as gone: the
	// connection is healed as a lost one (on stdio the process is shut
	// down and respawned; on WebSocket and HTTP the connection is made
	// again and the era re-negotiated, which re-opens the legacy GET
	// stream and the modern listen streams), and a [ConnEvent]
	// "keepalive-timeout" is reported. It detects a peer that stopped
	// answering, not one stream that died while the peer answers. 0 or
	// negative (the default): no keepalive.
	KeepAlive        time.Duration
	KeepAliveTimeout time.Duration
	// ReconnectInitial and ReconnectMax pace the re-opening of streams
	// that dropped: the first wait and the cap of a doubling backoff. For
	// the modern listen streams ([Client.Subscribe], the handler's change
	// listeners; with jitter) 0 or negative selects 100 ms and 30 s; for
	// the legacy GET stream of a Streamable HTTP connection made by
	// [Dial] (transport.StreamableHTTP.ReconnectBackoff) 1 s and 30 s.
	ReconnectInitial time.Duration
	ReconnectMax     time.Duration
}

// liveness is the policy's keepalive and pacing, as the engine takes it.
func (p RetryPolicy) liveness() engine.Liveness {
	return engine.Liveness{KeepAlive: p.KeepAlive, KeepAliveTimeout: p.KeepAliveTimeout,
		RelistenInitial: p.ReconnectInitial, RelistenMax: p.ReconnectMax}
}

// engine is the policy as the engine takes it (ProbeTimeout apart).
func (p RetryPolicy) engine() engine.RetryPolicy {
	return engine.RetryPolicy{MaxAttempts: p.MaxAttempts, InitialInterval: p.InitialInterval,
		MaxInterval: p.MaxInterval, MaxElapsed: p.MaxElapsed}
}
