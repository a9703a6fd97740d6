package engine

import (
	"sync"
	"testing"
)

// TestSignal: a signal waited for before it fires closes that channel; one
// fired first gives a closed channel without making one; fired never
// makes the channel; concurrent waits get one channel.
func TestSignal(t *testing.T) {
	s := &Session{}
	ch := s.wait(sigDone)
	if s.fired(sigDone) || isClosed(ch) {
		t.Fatal("a new signal is closed")
	}
	if s.wait(sigDone) != ch {
		t.Fatal("two waits got two channels")
	}
	s.fire(sigDone)
	if !isClosed(ch) || !s.fired(sigDone) {
		t.Fatal("the channel waited for was not closed")
	}

	if s.fired(sigJoined) || s.sigs[sigJoined] != nil {
		t.Fatal("fired made the channel of a new signal")
	}
	sessions := make([]Session, 2) // AllocsPerRun runs f twice
	i := 0
	if n := testing.AllocsPerRun(1, func() {
		s := &sessions[i]
		i++
		s.fire(sigLoopDone)
		if !isClosed(s.wait(sigLoopDone)) {
			t.Error("a signal fired before it was waited for is open")
		}
	}); n != 0 {
		t.Errorf("a signal fired before anything waited for it allocates %v times, want 0", n)
	}

	racing := &Session{}
	chans := make(chan (<-chan struct{}), 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			ch := racing.wait(sigJoined)
			chans <- ch
			<-ch
		})
	}
	racing.fire(sigJoined)
	wg.Wait()
	close(chans)
	first := <-chans
	for ch := range chans {
		if ch != first {
			t.Fatal("concurrent waits got two channels")
		}
	}
}
