package engine

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// The loop's step sequencing around a heal, driven deterministically
// (testing/synctest, a scripted peer): a call made while the session heals
// waits for the heal's last step, and Close during a step returns at once.

// slowHandshake answers the era's handshake after delay (fake time in a
// bubble) and everything else at once, as next does.
func slowHandshake(delay time.Duration, next func(p *peer, m jsonrpc.Message)) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && (r.Method == protocol.MethodInitialize || r.Method == protocol.MethodDiscover) {
			p.goFn(func() {
				time.Sleep(delay)
				next(p, m)
			})
			return
		}
		next(p, m)
	}
}

// silentHandshake never answers the handshake (the heal's step stays in
// flight) and answers everything else as next does.
func silentHandshake(next func(p *peer, m jsonrpc.Message)) func(p *peer, m jsonrpc.Message) {
	return func(p *peer, m jsonrpc.Message) {
		if r, ok := m.(*jsonrpc.Request); ok && (r.Method == protocol.MethodInitialize || r.Method == protocol.MethodDiscover) {
			return
		}
		next(p, m)
	}
}

var healEras = []struct {
	name      string
	mode      Mode
	server    func(p *peer, m jsonrpc.Message)
	handshake []string // on the new connection
	method    string   // the call made during the heal
}{
	{"legacy", ModeLegacy, legacyServer, []string{"initialize", "notifications/initialized"}, protocol.MethodPing},
	{"modern", ModeAuto, modernServer, []string{"server/discover"}, protocol.MethodToolsList},
}

// TestCallDuringHealWaitsForHandshake: the connection drops under a call
// (which fails: a tool is not replayed by default); a call made at once waits while the loop
// reconnects and runs the pinned era's handshake (answered 2 s later), and
// is sent on the new connection only after it, never on the dead one.
func TestCallDuringHealWaitsForHandshake(t *testing.T) {
	const delay = 2 * time.Second
	for _, era := range healEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(dieOn("tools/call", era.server), slowHandshake(delay, era.server))
				s := connected(t, tr, Config{Mode: era.mode})
				if _, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, nil); !errors.Is(err, ErrOutcomeUnknown) {
					t.Fatalf("Call on the dropped connection = %v, want ErrOutcomeUnknown (not replayed by default)", err)
				}
				start := time.Now()
				if _, err := s.Call(t.Context(), era.method, map[string]any{}, nil); err != nil {
					t.Fatalf("%s during the heal = %v, want it answered after the heal", era.method, err)
				}
				if waited := time.Since(start); waited < delay {
					t.Errorf("%s returned after %v, before the heal's handshake was answered (%v)", era.method, waited, delay)
				}
				if got := tr.peer(0).methods(); len(got) == 0 || got[len(got)-1] != "tools/call" {
					t.Errorf("methods on the dropped connection = %v, want tools/call last", got)
				}
				want := append(append([]string{}, era.handshake...), era.method)
				checkDiff(t, "methods on the new connection", want, tr.peer(1).methods())
				if st := s.State(); !st.ready() {
					t.Errorf("state after the heal = %v, want a ready state", st)
				}
			})
		})
	}
}

// TestCloseDuringHealStep: Close while the heal's handshake is in flight
// (the server never answers it) returns at once, without waiting for the
// heal's timeout, and the call waiting for the heal fails with ErrClosed.
// synctest.Test then proves that no goroutine of the session is left.
func TestCloseDuringHealStep(t *testing.T) {
	for _, era := range healEras {
		t.Run(era.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := newScripted(dieOn("tools/call", era.server), silentHandshake(era.server))
				s := connected(t, tr, Config{Mode: era.mode})
				if _, err := s.Call(t.Context(), "tools/call", map[string]string{"name": "x"}, nil); !errors.Is(err, ErrOutcomeUnknown) {
					t.Fatalf("Call on the dropped connection = %v, want ErrOutcomeUnknown (not replayed by default)", err)
				}
				waiting := make(chan error, 1)
				go func() {
					_, err := s.Call(t.Context(), era.method, map[string]any{}, nil)
					waiting <- err
				}()
				synctest.Wait() // the handshake is sent and unanswered; the call waits
				if st := s.State(); st != StateReconnecting && st != StateProbing && st != StateInitializing {
					t.Fatalf("state during the heal = %v", st)
				}
				if got := tr.peer(1).methods(); !cmp.Equal(got, era.handshake[:1]) {
					t.Errorf("methods on the new connection = %v, want %v (the step in flight)", got, era.handshake[:1])
				}
				start := time.Now()
				if err := s.Close(); err != nil {
					t.Errorf("Close = %v", err)
				}
				if took := time.Since(start); took != 0 {
					t.Errorf("Close took %v of (fake) time, want none: it must not wait for the step", took)
				}
				if err := <-waiting; !errors.Is(err, ErrClosed) {
					t.Errorf("the call waiting for the heal = %v, want ErrClosed", err)
				}
				if st := s.State(); st != StateClosed {
					t.Errorf("state after Close = %v, want closed", st)
				}
			})
		})
	}
}

// TestStepGoroutineDoesNotWaitForLoop: a negotiation step's I/O goroutine

// with nothing to undo posts its outcome and ends at once, without waiting

// for the loop to run it (the loop runs it later, in order).

func TestStepGoroutineDoesNotWaitForLoop(t *testing.T) {
	s := newSession(t.Context(), newScripted(modernServer), Config{})
	ran := make(chan struct{})
	d := &driver{s: s, ctx: t.Context()}
	d.spawn(func() (func(), func()) { return func() { close(ran) }, nil })
	ended := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatal("the step's goroutine waited for the loop")
	}
	s.startLoop()
	<-ran
	s.Close()
}
