package engine

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestNegotiationRequestTakesNoLoopTrip: a negotiation request registers
// directly in the pending table and the reader hands it its response, so
// that it completes while the loop is not running at all, and posts
// nothing to it.
func TestNegotiationRequestTakesNoLoopTrip(t *testing.T) {
	tr := newScripted(modernServer)
	s := newSession(t.Context(), tr, Config{})
	conn, err := tr.Connect(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	// Play the loop's part in installing the connection (it owns no other
	// goroutine yet), without starting the loop.
	ref := s.install(conn)
	t.Cleanup(func() {
		s.wg.Add(1)
		go s.dispatcher()
		go s.runLoop()
		s.Close()
		tr.wait()
	})
	d := &driver{s: s, t: tr, ctx: t.Context()}
	params, err := d.probeParams(ref, protocol.Version20260728)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		resp *jsonrpc.Response
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := d.rpc(t.Context(), protocol.MethodDiscover, params)
		got <- answer{resp, err}
	}()
	select {
	case a := <-got:
		if a.err != nil || a.resp == nil || a.resp.Error != nil || len(a.resp.Result) == 0 {
			t.Fatalf("server/discover = %+v, %v; want its result", a.resp, a.err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("server/discover waited for the loop")
	}
	if n := len(s.events); n != 0 {
		t.Errorf("the request posted %d events to the loop, want none", n)
	}
	s.pending.mu.Lock()
	left := len(s.pending.calls)
	s.pending.mu.Unlock()
	if left != 0 {
		t.Errorf("%d calls left pending after the response", left)
	}
}

// TestNegotiationRequestAfterClose: once the session closed, negotiation
// traffic no longer registers directly on the last connection: it fails
// with ErrClosed and nothing more is written.
func TestNegotiationRequestAfterClose(t *testing.T) {
	tr := newScripted(modernServer)
	s := connected(t, tr, Config{})
	ref := s.pub.Load().ref
	d := &driver{s: s, t: tr, ctx: t.Context()}
	params, err := d.probeParams(ref, protocol.Version20260728)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	tr.wait()
	before := len(tr.peer(0).requests(protocol.MethodDiscover))
	if _, err := d.rpc(t.Context(), protocol.MethodDiscover, params); !errors.Is(err, ErrClosed) {
		t.Errorf("server/discover after Close: err = %v, want ErrClosed", err)
	}
	if after := len(tr.peer(0).requests(protocol.MethodDiscover)); after != before {
		t.Errorf("server/discover after Close reached the server (%d → %d requests)", before, after)
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

// TestCloseTimesOutOnStuckHandler: Close waits at most CloseTimeout for a
// handler that ignores its cancelled context, returns ErrCloseTimeout,
// and the session's goroutines are still joined once the handler ends
// (the bubble would not end otherwise).
func TestCloseTimesOutOnStuckHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started, release := make(chan struct{}), make(chan struct{})
		h := handler.Funcs{CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
			close(started)
			<-release // ignores ctx
			return nil, ctx.Err()
		}}
		tr := newScripted(legacyServer)
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy, Handler: handler.Detect(h)})
		if err != nil {
			t.Fatal(err)
		}
		req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "sampling/createMessage", map[string]any{"messages": []any{}, "maxTokens": 1})
		tr.peer(0).send(req)
		<-started
		start := time.Now()
		err = s.Close()
		if !errors.Is(err, ErrCloseTimeout) {
			t.Errorf("Close = %v, want ErrCloseTimeout", err)
		}
		if d := time.Since(start); d != CloseTimeout {
			t.Errorf("Close took %v, want CloseTimeout (%v)", d, CloseTimeout)
		}
		close(release)
		synctest.Wait()
		select {
		case <-s.joined:
		default:
			t.Error("the session's goroutines were not joined after the handler ended")
		}
		tr.wait()
	})
}

// TestCloseJoinsAtOnce: when every goroutine ends promptly, Close returns
// with them joined and no timeout error, taking no time on the clock.
func TestCloseJoinsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(legacyServer)
		s, err := Connect(t.Context(), tr, Config{Mode: ModeLegacy})
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := s.Close(); err != nil {
			t.Errorf("Close = %v, want nil", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close took %v of the fake clock, want 0", d)
		}
		select {
		case <-s.joined:
		default:
			t.Error("Close returned before the session's goroutines were joined")
		}
		tr.wait()
	})
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
	go s.runLoop()
	<-ran
	s.Close()
}
