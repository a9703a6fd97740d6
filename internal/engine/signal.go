package engine

// A signal is one of a Session's channels that are closed once and made
// only when something waits for them: most sessions are closed without
// anything waiting for their Done, for their loop to end, or for their
// goroutines to be joined, and a channel costs an allocation. A signal
// closed before anything waited for it is closedChan. sigMu orders making
// and closing; sigMade (a bit per signal, set once the channel is in
// place) lets a wait on a signal already made take no lock.
type signal uint8

const (
	sigDone     signal = iota // Done's: the session failed or closed (markDone)
	sigLoopDone               // the loop returned, or Close played its part (closeIdle)
	sigJoined                 // the loop returned and wg is done (runLoop, joinIdle)
	numSignals
)

// wait returns the channel of g, made if it was not yet.
func (s *Session) wait(g signal) <-chan struct{} {
	if s.sigMade.Load()&(1<<g) != 0 {
		return s.sigs[g]
	}
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	if s.sigMade.Load()&(1<<g) == 0 {
		s.sigs[g] = make(chan struct{})
		s.sigMade.Or(1 << g)
	}
	return s.sigs[g]
}

// fire closes g; it must be called at most once for each signal.
func (s *Session) fire(g signal) {
	s.sigMu.Lock()
	defer s.sigMu.Unlock()
	if s.sigMade.Load()&(1<<g) != 0 {
		close(s.sigs[g])
		return
	}
	s.sigs[g] = closedChan
	s.sigMade.Or(1 << g)
}

// fired reports whether g was closed, without making its channel.
func (s *Session) fired(g signal) bool {
	if s.sigMade.Load()&(1<<g) == 0 {
		return false
	}
	select {
	case <-s.sigs[g]:
		return true
	default:
		return false
	}
}

// closedChan is the channel of every signal closed before anything
// waited for it.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()
