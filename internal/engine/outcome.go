package engine

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"github.com/conduitmcp/conduit/transport"
)

// The outcome of a request that ends without an answer is decided here,
// in one place, from the evidence of what happened to it and the replay
// policy: the table in the package doc ("The outcome rule"), in code.
// Every attempt that fails with a loss goes through outcome; its own
// loss, after a replay, goes through it again.

// evidence is what the engine knows of a request that ended without an
// answer, strongest first.
type evidence uint8

const (
	// notWritten: never handed to a connection (queued while not ready,
	// a heal that failed, a connection closed before the write).
	notWritten evidence = iota + 1
	// refused: written, but the transport proves it was not taken (a
	// refused dial, a POST whose connection failed before its body was
	// sent; HTTP 404 for an unknown session to the request's own
	// POST; HTTP 408, 429 or 503).
	refused
	// maybeDelivered: written, wholly or in part, and the connection,
	// process or stream was lost before an answer (whatever a resumption
	// GET said afterwards), an HTTP 5xx that does not say the request
	// was not taken, or a 2xx without a response to it.
	maybeDelivered
)

// loss is one attempt's loss as classified: its evidence, the evidence in
// words for events and errors, for a refusal whether the server asked for
// a wait (408, 429, 503), and whether sending again would meet the same
// (a refused dial, a 405; a 2xx without a response).
type loss struct {
	ev    evidence
	why   string
	wait  *transport.HTTPError // refused with a status to back off on
	final bool                 // sending again would meet the same: never re-sent
}

// lostAttempt is the attempt of a call that may have run: its loss and
// the evidence in words.
type lostAttempt struct {
	err error
	why string
}

// maxUnsentResends bounds the re-sends of one request that was not
// written or was refused, so that a connection that flaps cannot keep a
// call forever (each re-send also waits for a heal, itself bounded).
const maxUnsentResends = 3

// classify returns the evidence of the loss err, the error an attempt
// failed with, and false when err is not a loss: an answer (a JSON-RPC error, an HTTP error status the
// server meant), the caller's context or limit, Close, or an answer over
// the size limit (the server ran the request; re-sending it would run it
// again only to meet the same limit).
func classify(err error) (loss, bool) {
	if answeredTooLarge(err) || errors.Is(err, ErrClosed) {
		return loss{}, false
	}
	if se, ok := errors.AsType[*transport.StreamError](err); ok {
		// The server accepted the POST (2xx) and the stream that was to
		// carry the answer broke: a resumption GET that fails, even with
		// 404 for an unknown session or a refused dial, does not unsay
		// that.
		why := "the response stream broke after the server accepted the request"
		switch {
		case errors.Is(se, transport.ErrSessionExpired):
			why += ", and resuming it found the session gone"
		case dialFailed(se):
			why += ", and resuming it could not reach the server"
		}
		return loss{ev: maybeDelivered, why: why}, true
	}
	if dialFailed(err) {
		return loss{ev: refused, why: "the connection to the server could not be made", final: true}, true
	}
	if cl, ok := errors.AsType[*ConnectionLostError](err); ok {
		switch {
		case errors.Is(cl.Err, transport.ErrSessionExpired):
			return loss{ev: refused, why: "the server answered HTTP 404 (unknown session) to the request's own POST"}, true
		case cl.Unsent && cl.Reason != "":
			return loss{ev: notWritten, why: cl.Reason}, true
		case cl.Unsent:
			return loss{ev: notWritten, why: "the connection was closed before the request was written"}, true
		}
		if _, ok := errors.AsType[*transport.ExitError](cl.Err); ok {
			return loss{ev: maybeDelivered, why: "the stdio process exited after the request was written"}, true
		}
		if _, ok := errors.AsType[*transport.NetworkError](cl.Err); ok {
			return loss{ev: maybeDelivered, why: "the connection broke after the request was written, wholly or in part"}, true
		}
		return loss{ev: maybeDelivered, why: "the connection was lost after the request was written"}, true
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.StatusCode == http.StatusMethodNotAllowed && he.Method == http.MethodPost {
		// 405 to the request's own POST (with no JSON-RPC error, which
		// would be an answer): the endpoint takes no POST, so the server
		// did not take the request, and sending it again would meet the
		// same refusal.
		return loss{ev: refused, why: "the server answered HTTP 405 to the request's own POST", final: true}, true
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.Method == http.MethodPost && he.StatusCode >= 200 && he.StatusCode <= 299 {
		// A success status without a response to the request's own POST
		// (202 Accepted, 204, a body that is neither JSON nor an event
		// stream): the server took the request and may run it, but did
		// not answer it, and would answer a replay the same way.
		return loss{ev: maybeDelivered, why: "the server answered HTTP " + strconv.Itoa(he.StatusCode) + " to the request's own POST without a response", final: true}, true
	}
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.Retryable() {
		status := strconv.Itoa(he.StatusCode)
		if untakenStatus(he.StatusCode) {
			return loss{ev: refused, why: "the server answered HTTP " + status + ", which says it did not take the request", wait: he}, true
		}
		return loss{ev: maybeDelivered, why: "the server answered HTTP " + status + ", which does not say it did not run the request"}, true
	}
	return loss{}, false
}

// untakenStatus reports an HTTP status by which the server says it did
// not take the request: 408 Request Timeout (it did not receive all of
// it), 429 Too Many Requests and 503 Service Unavailable (it refused it).
func untakenStatus(code int) bool {
	return code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable
}

// outcome decides what a call does after an attempt failed with err, a
// loss (classify): send it again, or fail with an error that says whether
// the server may have run it. It is the package doc's table:
//
//   - not written, refused: re-sent after the heal (the registration
//     waits for it) or after the wait the server asked for (408, 429,
//     503: within Config.Retry, and not under ReplayNone), under any
//     policy, at most maxUnsentResends times; when the heal failed, the
//     dial was refused or the re-sends are used up, the call fails as not
//     sent ([ErrNotSent]), or with [ErrOutcomeUnknown] when an earlier
//     attempt of it may have run.
//   - possibly delivered: replayed once when the policy allows it
//     (ReplayAll; ReplaySafe for a request that cannot run twice);
//     otherwise, and for a lost replay whatever the policy, it fails with
//     [ErrOutcomeUnknown], counting the attempts that may have run.
func (s *Session) outcome(ctx context.Context, cs *callState, o *CallOptions, l loss, err error) (afterAttempt, error) {
	method := cs.method
	if l.ev == maybeDelivered {
		cs.maybeRan++
		cs.lost = lostAttempt{err: err, why: l.why}
		switch {
		case l.final:
			l.why += "; not sent again: the server would answer it the same way"
		case cs.maybeRan == 1:
			replay, why := s.replayable(ctx, cs, o)
			if replay {
				cs.lost.why += "; sent again: " + why
				return s.replay(ctx, cs, o, l, err, why)
			}
			l.why += "; not sent again: " + why
		default:
			l.why += "; not sent again: the replay was lost too"
		}
		s.log.Info("not re-sending a request that the server may have executed", "method", method, "attempts", cs.maybeRan, "why", l.why)
		s.emit(Event{Kind: EventReplayRefused, Method: method, Err: err, Reason: l.why})
		return nextDone, &OutcomeUnknownError{Method: method, Attempts: cs.maybeRan, Reason: l.why, Err: err}
	}
	cs.unsent++
	switch {
	case s.healFailed():
		if l.ev != notWritten { // a request never written says so already
			l.why += "; the session could not be restored"
		}
	case l.final:
		// A refused dial or a 405: nothing heals a connection per
		// request, and sending again at once would be refused again.
	case cs.unsent > maxUnsentResends:
		l.why += "; not sent again after " + strconv.Itoa(maxUnsentResends) + " re-sends"
	case l.wait != nil && s.policy(o) == ReplayNone:
		l.why += "; not retried: the replay policy is none"
	case l.wait != nil:
		if cs.retry == nil {
			cs.retry = newRetrier(s.cfg.Retry)
		}
		wait, ok := cs.retry.next(l.wait.RetryAfter)
		if !ok {
			l.why += "; the retries are used up"
			break
		}
		s.log.Info("retrying a request", "method", method, "status", l.wait.StatusCode, "wait", wait)
		s.emit(Event{Kind: EventRetried, Method: method, Err: err, Reason: l.why})
		if err := s.sleep(ctx, wait); err != nil {
			return nextDone, s.waitEnded(cs, l.why+"; to be sent again after "+wait.String(), err)
		}
		cs.why = "retry"
		return nextResend, nil
	default:
		return s.replay(ctx, cs, o, l, err, "no server took it, so it goes out again under any policy")
	}
	return nextDone, s.notSent(cs, l, err)
}

// notSent is the error of a request that failed without being taken by
// this attempt: [ErrNotSent], unless an earlier attempt may have run (a
// replay that could not be sent), which is [ErrOutcomeUnknown].
func (s *Session) notSent(cs *callState, l loss, err error) error {
	if cs.maybeRan > 0 {
		// The error is the loss of the attempt that may have run; the
		// replay's failure is in the reason.
		why := cs.lost.why + "; the replay was not sent: " + l.why
		s.emit(Event{Kind: EventReplayRefused, Method: cs.method, Err: err, Reason: why})
		return &OutcomeUnknownError{Method: cs.method, Attempts: cs.maybeRan, Reason: why, Err: cs.lost.err}
	}
	if cl, ok := errors.AsType[*ConnectionLostError](err); ok && cl.Unsent {
		if cl.Reason == "" {
			cl.Reason = l.why
		}
		return cl
	}
	return &ConnectionLostError{Method: cs.method, Err: err, Unsent: true, Reason: l.why}
}

// replay sends a lost request again: a possibly delivered one once (when
// the policy allows), one not written or refused after the heal.
func (s *Session) replay(ctx context.Context, cs *callState, o *CallOptions, l loss, err error, why string) (afterAttempt, error) {
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.RetryAfter > 0 {
		// An HTTP 5xx that asked for a wait: the replay honours it,
		// within Config.Retry.
		if cs.retry == nil {
			cs.retry = newRetrier(s.cfg.Retry)
		}
		wait, ok := cs.retry.next(he.RetryAfter)
		if !ok {
			// Not at once either: the server asked for the wait.
			return nextDone, s.notSentAgain(cs, l.why+"; not sent again: the server asked for a wait of "+he.RetryAfter.String()+", past the retry budget", err)
		}
		if serr := s.sleep(ctx, wait); serr != nil {
			return nextDone, s.waitEnded(cs, l.why+"; to be sent again after "+wait.String()+": "+why, serr)
		}
	}
	why = l.why + "; sent again: " + why
	s.log.Info("re-sending a request lost with its connection", "method", cs.method, "why", why)
	s.emit(Event{Kind: EventReplayed, Method: cs.method, Err: err, Reason: why})
	if o.OnReplay != nil {
		o.OnReplay()
	}
	cs.why = "replay"
	return nextResend, nil
}

// waitEnded is the error of a call whose wait before its next attempt
// ended with err (the caller's context, Close); reason says how the
// attempt before failed and what was to follow (see notSentAgain).
func (s *Session) waitEnded(cs *callState, reason string, err error) error {
	why := "the caller's context ended"
	if errors.Is(err, ErrClosed) {
		why = "the client was closed"
	}
	return s.notSentAgain(cs, reason+"; then "+why+" before it was sent again", err)
}

// notSentAgain is the error of a call that stops after a failed attempt
// without sending it again, for reason. The attempts so far decide:
// unknown when one may have run, else not sent.
func (s *Session) notSentAgain(cs *callState, reason string, err error) error {
	if cs.maybeRan > 0 {
		s.emit(Event{Kind: EventReplayRefused, Method: cs.method, Err: err, Reason: reason})
		return &OutcomeUnknownError{Method: cs.method, Attempts: cs.maybeRan, Reason: reason, Err: err}
	}
	return &unsentError{Method: cs.method, Reason: reason, Err: err}
}

// replayable reports whether the policy allows replaying a request that
// may have run, and why (or why not), in words.
func (s *Session) replayable(ctx context.Context, cs *callState, o *CallOptions) (bool, string) {
	switch s.policy(o) {
	case ReplayAll:
		return true, "the replay policy is all"
	case ReplayNone:
		return false, "the replay policy is none"
	}
	switch {
	case ReadOnlyMethod(cs.method):
		return true, cs.method + " is read-only by protocol"
	case o.Idempotent:
		return true, "the caller declared it idempotent"
	case o.Safety != nil:
		return o.Safety(ctx)
	}
	return false, cs.method + " may have side effects and the replay policy is safe"
}

// unanswered is the error of a call that ended with err and no answer.
// One the caller ended (its context, a request timeout, Close) says
// whether the server may have run it, as a loss does: an
// [*OutcomeUnknownError] wrapping err when an attempt may have reached
// the server (the last one was written, or an earlier one was possibly
// delivered), else an error matching [ErrNotSent]. Any other err is
// returned as it is: an answer, or the outcome rule's own error.
func (s *Session) unanswered(ctx context.Context, cs *callState, c *call, err error) error {
	if errors.Is(err, ErrOutcomeUnknown) || errors.Is(err, ErrNotSent) {
		return err
	}
	var why string
	_, timedOut := errors.AsType[*RequestTimeoutError](err)
	l, isLoss := classify(err)
	switch {
	case timedOut:
		why = "the request timed out"
	case ctx.Err() != nil && (isLoss || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)):
		why = "the caller's context ended"
	case errors.Is(err, ErrClosed):
		why = "the client was closed"
	default:
		return err // an answer, even one that came as ctx ended
	}
	this := c.wrote // this attempt may have reached the server
	if isLoss {
		this = l.ev == maybeDelivered
	}
	ran := cs.maybeRan
	switch {
	case this && ran > 0:
		why = cs.lost.why + "; sent again, then " + why + " before an answer"
		ran++
	case this:
		why += " after the request was written, before an answer"
		ran++
	case ran > 0:
		why = cs.lost.why + "; then " + why + " before it was sent again"
	default:
		return &unsentError{Method: cs.method, Reason: why + " before the request was written", Err: err}
	}
	return &OutcomeUnknownError{Method: cs.method, Attempts: ran, Reason: why, Err: err}
}

// healFailed reports whether the session failed (a heal that could not
// restore it) or closed: a request not sent has nothing to wait for.
func (s *Session) healFailed() bool {
	return s.Err() != nil
}

// isClosing reports whether Close was called.
func (s *Session) isClosing() bool {
	select {
	case <-s.closing():
		return true
	default:
		return false
	}
}
