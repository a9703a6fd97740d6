package engine

import "strconv"

// State is a state of the session's state machine (DESIGN.md, "The
// connection actor"). Every change goes through Session.setState on the
// loop goroutine, which checks that the transition is legal.
type State uint32

const (
	// StateStart: Connect was called and nothing was sent yet. Next:
	// probing (ModeAuto, ModeModern, modern pin), initializing
	// (ModeLegacy, legacy pin, legacy hint), modern (modern hint).
	StateStart State = iota
	// StateProbing: server/discover is in flight (spec: basic/versioning,
	// "Backward compatibility"). Next: modern, a corrective or retried
	// probe, initializing, or failed.
	StateProbing
	// StateInitializing: the legacy initialize handshake is in flight
	// (spec 2025-11-25: basic/lifecycle). Next: legacy, probing (the
	// server answered with a modern error), or failed.
	StateInitializing
	// StateModern: the era is pinned to modern (2026-07-28); requests carry
	// _meta. Next: reconnecting when the connection is lost, closed.
	StateModern
	// StateLegacy: initialize succeeded. Next: reconnecting when the
	// connection or the HTTP session is lost, closed.
	StateLegacy
	// StateReconnecting: the connection was lost after negotiation (stdio
	// process exit, legacy HTTP 404) or an era hint proved wrong; the loop
	// reconnects and re-negotiates in the pinned era while new calls wait.
	// Next: probing, initializing, modern, legacy, failed.
	StateReconnecting
	// StateFailed: unrecoverable; calls fail with Session.Err. Next: closed.
	StateFailed
	// StateClosed: Close ran. Terminal.
	StateClosed
	numStates
)

var stateNames = [...]string{"start", "probing", "initializing", "modern", "legacy", "reconnecting", "failed", "closed"}

// String returns the state's name, e.g. "probing".
func (s State) String() string {
	if s < numStates {
		return stateNames[s]
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// ready reports whether user calls may be sent in s.
func (s State) ready() bool { return s == StateModern || s == StateLegacy }

// legalTransitions lists, for each state, the states it may move to.
var legalTransitions = [numStates][]State{
	StateStart:        {StateProbing, StateInitializing, StateModern, StateFailed, StateClosed},
	StateProbing:      {StateProbing, StateInitializing, StateModern, StateFailed, StateClosed},
	StateInitializing: {StateInitializing, StateProbing, StateLegacy, StateFailed, StateClosed},
	StateModern:       {StateReconnecting, StateFailed, StateClosed},
	StateLegacy:       {StateReconnecting, StateFailed, StateClosed},
	StateReconnecting: {StateProbing, StateInitializing, StateModern, StateLegacy, StateFailed, StateClosed},
	StateFailed:       {StateClosed},
	StateClosed:       {},
}

func legal(from, to State) bool {
	if from >= numStates {
		return false
	}
	for _, s := range legalTransitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// setState moves the state machine to next. It runs on the loop. An
// illegal transition is a bug in this package, not something a peer can
// cause, so it panics.
func (s *Session) setState(next State) { s.setStateWith(next, nil) }

// setStateWith is setState publishing, in the same view as the new state
// and the current connection (lp.ref), what also (when not nil) changes
// in it.
func (s *Session) setStateWith(next State, also func(v *view)) {
	cur := s.lp.st
	if !legal(cur, next) {
		panic("session: illegal state transition " + cur.String() + " -> " + next.String())
	}
	s.log.Debug("session state", "from", cur, "to", next)
	s.lp.st = next
	s.publish(func(v *view) {
		v.st, v.ref = next, s.lp.ref
		if also != nil {
			also(v)
		}
	})
	// Open the pending table to direct registrations in a ready state
	// (with the current connection and negotiation), shut it otherwise.
	s.pending.setOpen(next.ready(), s.lp.ref, s.pub.Load().neg)
}
