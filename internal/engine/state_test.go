package engine

import (
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

func TestStateTransitions(t *testing.T) {
	tests := []struct {
		from, to State
		ok       bool
	}{
		{StateStart, StateProbing, true},
		{StateStart, StateLegacy, false},
		{StateProbing, StateProbing, true},
		{StateProbing, StateLegacy, false},
		{StateInitializing, StateLegacy, true},
		{StateModern, StateLegacy, false},
		{StateModern, StateInitializing, false},
		{StateModern, StateReconnecting, true},
		{StateReconnecting, StateModern, true},
		{StateFailed, StateModern, false},
		{StateClosed, StateStart, false},
		{State(99), StateClosed, false},
	}
	for _, tt := range tests {
		if got := legal(tt.from, tt.to); got != tt.ok {
			t.Errorf("legal(%v, %v) = %v, want %v", tt.from, tt.to, got, tt.ok)
		}
	}
	s := newSession(t.Context(), nil, Config{})
	defer s.lifeCancel()
	s.setState(StateModern)
	if s.State() != StateModern {
		t.Errorf("State() = %v after setState(modern)", s.State())
	}
	defer func() {
		if recover() == nil {
			t.Error("setState(modern -> initializing) did not panic")
		}
	}()
	s.setState(StateInitializing)
}

func TestStateString(t *testing.T) {
	for s := StateStart; s < numStates; s++ {
		if s.String() == "" {
			t.Errorf("State(%d) has no name", s)
		}
	}
	if got := State(42).String(); got != "State(42)" {
		t.Errorf("State(42).String() = %q", got)
	}
}

// TestBecomeReadyPublishesOneView: the negotiation, the ready state and

// the generation are published together, in one view (one allocation).

func TestBecomeReadyPublishesOneView(t *testing.T) {
	s := newSession(t.Context(), newScripted(modernServer), Config{})
	n := &negState{version: protocol.Version20260728}
	allocs := testing.AllocsPerRun(100, func() {
		s.lp.st = StateProbing
		s.becomeReady(n, StateModern)
	})
	if allocs != 1 {
		t.Errorf("becomeReady allocates %v times, want 1 (one view)", allocs)
	}
	v := s.pub.Load()
	if v.st != StateModern || v.neg != n || v.gen != 101 {
		t.Errorf("published view: state %v, neg %p, gen %d; want modern, %p, 101", v.st, v.neg, v.gen, n)
	}
}
