package engine

import (
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// eventLog records the session's events.
type eventLog struct{ record[Event] }

func (l *eventLog) count(k EventKind) (n, sum int) {
	for _, ev := range l.all() {
		if ev.Kind == k {
			n++
			sum += ev.Count
		}
	}
	return n, sum
}

// listenDurable connects to tr and opens a durable listen stream.
func listenDurable(t *testing.T, tr *scripted, cfg Config) *Stream {
	t.Helper()
	s := connected(t, tr, cfg)
	st, err := s.ListenDurable(t.Context(), map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// ackThenFail acknowledges every listen and then answers it with an
// error at once: each stream is acknowledged and ends soon after.
func ackThenFail(p *peer, r *jsonrpc.Request) {
	if r.Method != protocol.MethodSubscriptionsListen {
		modernServer(p, r)
		return
	}
	p.notify(protocol.NotificationSubscriptionsAcknowledged, tagged(r.ID, map[string]any{"notifications": map[string]any{"toolsListChanged": true}}))
	p.replyErr(r, jsonrpc.CodeInternalError, "buffer overflowed", nil)
}

// TestRelistenPaced: a durable stream whose every listen is acknowledged
// and then ends is re-listened with a growing backoff, because an
// acknowledgement followed by a quick end does not reset it (issue 15,
// item 6): at most 8 listens in 5 seconds (the client re-listened 51
// times before), each re-listen reported as EventRelistened.
func TestRelistenPaced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(ackThenFail))
		evs := &eventLog{}
		st := listenDurable(t, tr, Config{OnEvent: evs.add})
		acks := 0
		go func() {
			for n := range st.Notifications() {
				if n.Method == protocol.NotificationSubscriptionsAcknowledged {
					acks++
				}
			}
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		listens := len(tr.peer(0).requests(protocol.MethodSubscriptionsListen))
		if listens < 4 || listens > 8 {
			t.Errorf("%d listens in 5 s, want 4..8 (paced)", listens)
		}
		if n, _ := evs.count(EventRelistened); n != listens-1 {
			t.Errorf("EventRelistened reported %d times, want %d", n, listens-1)
		}
		if st.Err() != nil {
			t.Errorf("durable stream ended: %v", st.Err())
		}
		st.Close()
		synctest.Wait()
		if acks != listens {
			t.Errorf("consumer saw %d acknowledgements, want %d", acks, listens)
		}
		t.Logf("%d listens in 5 s", listens)
	})
}

// TestRelistenDefaultPacing: without Liveness pacing, a server that
// acknowledges and then ends every listen is re-listened after waits
// that start at 100 ms and double up to 30 s (each drawn from the upper
// half of the backoff, for jitter), and stay there.
func TestRelistenDefaultPacing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method == protocol.MethodSubscriptionsListen {
				mu.Lock()
				at = append(at, time.Now())
				mu.Unlock()
			}
			ackThenFail(p, r)
		}))
		st := listenDurable(t, tr, Config{})
		go func() {
			for range st.Notifications() {
			}
		}()
		time.Sleep(10 * time.Minute)
		st.Close()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(at) < 12 {
			t.Fatalf("%d listens in 10 minutes, want the backoff to reach its cap", len(at))
		}
		backoff := relistenInitial
		for i := 1; i < len(at); i++ {
			gap := at[i].Sub(at[i-1])
			if gap < backoff/2 || gap > backoff {
				t.Errorf("wait before listen %d = %v, want within [%v, %v]", i+1, gap, backoff/2, backoff)
			}
			backoff = min(2*backoff, 30*time.Second)
		}
	})
}

// TestRelistenStableResets: after a stream that lived past
// relistenStable, the backoff starts again from relistenInitial.
func TestRelistenStableResets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var at []time.Time
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodSubscriptionsListen {
				modernServer(p, r)
				return
			}
			mu.Lock()
			at = append(at, time.Now())
			n := len(at)
			mu.Unlock()
			p.notify(protocol.NotificationSubscriptionsAcknowledged, tagged(r.ID, map[string]any{"notifications": map[string]any{}}))
			life := time.Millisecond
			if n == 4 {
				life = 2 * relistenStable
			}
			p.goFn(func() {
				time.Sleep(life)
				p.replyErr(r, jsonrpc.CodeInternalError, "gone", nil)
			})
		}))
		st := listenDurable(t, tr, Config{})
		go func() {
			for range st.Notifications() {
			}
		}()
		time.Sleep(3*relistenStable + 5*time.Second)
		st.Close()
		synctest.Wait()
		mu.Lock()
		defer mu.Unlock()
		if len(at) < 6 {
			t.Fatalf("%d listens, want at least 6", len(at))
		}
		// Listens 2..4 back off (≥ 50, 100, 200 ms); listen 5 follows the
		// long-lived 4th within relistenInitial.
		if gap := at[3].Sub(at[2]); gap < 100*time.Millisecond {
			t.Errorf("gap before listen 4 = %v, want the backoff grown", gap)
		}
		if gap := at[4].Sub(at[3]) - 2*relistenStable; gap > relistenInitial+time.Millisecond {
			t.Errorf("re-listen after a stable stream took %v, want within %v", gap, relistenInitial)
		}
	})
}

// TestRelistenGivesUp: listens that fail before their acknowledgement end
// the durable stream after relistenAttempts in a row, with the error.
func TestRelistenGivesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		first := true
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodSubscriptionsListen {
				modernServer(p, r)
				return
			}
			if first {
				first = false
				p.notify(protocol.NotificationSubscriptionsAcknowledged, tagged(r.ID, map[string]any{"notifications": map[string]any{}}))
			}
			p.replyErr(r, jsonrpc.CodeInvalidParams, "no", nil)
		}))
		st := listenDurable(t, tr, Config{})
		drain(st)
		if !errors.Is(st.Err(), jsonrpc.ErrInvalidParams) {
			t.Errorf("Err() = %v, want the listen's error", st.Err())
		}
		if n := len(tr.peer(0).requests(protocol.MethodSubscriptionsListen)); n != relistenAttempts+1 {
			t.Errorf("%d listens, want %d", n, relistenAttempts+1)
		}
	})
}

// TestListenBurstCoalesced: a burst of list_changed and resources/updated
// on a listen stream whose consumer is behind does not end the stream
// (issue 15, item 6): equal notifications are coalesced, counted as
// EventDropped, and the latest of each kind still arrives.
func TestListenBurstCoalesced(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const burst = 10000
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodSubscriptionsListen {
				modernServer(p, r)
				return
			}
			p.notify(protocol.NotificationSubscriptionsAcknowledged, tagged(r.ID, map[string]any{"notifications": map[string]any{}}))
			for i := range burst {
				if i%2 == 0 {
					p.notify(protocol.NotificationToolsListChanged, tagged(r.ID, nil))
				} else {
					p.notify(protocol.NotificationResourcesUpdated, tagged(r.ID, map[string]any{"uri": "file:///a"}))
				}
			}
			p.notify(protocol.NotificationPromptsListChanged, tagged(r.ID, nil))
		}))
		evs := &eventLog{}
		s, st := listenAll(t, tr, Config{OnEvent: evs.add})
		synctest.Wait()
		if st.Err() != nil {
			t.Fatalf("stream ended under the burst: %v", st.Err())
		}
		got := map[string]int{}
		for len(got) < 4 || got[protocol.NotificationPromptsListChanged] == 0 {
			n := <-st.Notifications()
			got[n.Method]++
		}
		st.Close()
		synctest.Wait()
		s.Close()
		_, dropped := evs.count(EventDropped)
		delivered := got[protocol.NotificationToolsListChanged] + got[protocol.NotificationResourcesUpdated]
		if delivered+dropped != burst {
			t.Errorf("delivered %d + coalesced %d != %d", delivered, dropped, burst)
		}
		if delivered > StreamBuffer+2 {
			t.Errorf("delivered %d, want at most the buffer and one held of each", delivered)
		}
	})
}

// TestRelistenClosedWhileWaiting: Close during the backoff ends the
// durable stream gracefully and no re-listen follows.
func TestRelistenClosedWhileWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := newScripted(reqHandler(ackThenFail))
		st := listenDurable(t, tr, Config{})
		synctest.Wait() // acknowledged, ended, re-listen scheduled
		st.Close()
		drain(st)
		if st.Err() != nil {
			t.Errorf("Err() = %v, want nil after Close", st.Err())
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if n := len(tr.peer(0).requests(protocol.MethodSubscriptionsListen)); n != 1 {
			t.Errorf("%d listens, want 1 (no re-listen after Close)", n)
		}
	})
}

func TestListenDurableLegacy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, s := legacySession(t)
		if _, err := s.ListenDurable(t.Context(), nil); !errors.Is(err, ErrNotModern) {
			t.Errorf("ListenDurable on legacy = %v, want ErrNotModern", err)
		}
	})
}

// TestRelistenDuplicateAck: a server that acknowledges one listen twice
// has not been listened to again: no EventRelistened is reported for the
// duplicate (one was before), and a real re-listen still is.
func TestRelistenDuplicateAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		listens := 0
		tr := newScripted(reqHandler(func(p *peer, r *jsonrpc.Request) {
			if r.Method != protocol.MethodSubscriptionsListen {
				modernServer(p, r)
				return
			}
			listens++
			ack := tagged(r.ID, map[string]any{"notifications": map[string]any{"toolsListChanged": true}})
			p.notify(protocol.NotificationSubscriptionsAcknowledged, ack)
			p.notify(protocol.NotificationSubscriptionsAcknowledged, ack)
			if listens == 1 {
				p.replyErr(r, jsonrpc.CodeInternalError, "gone", nil)
			}
		}))
		evs := &eventLog{}
		st := listenDurable(t, tr, Config{OnEvent: evs.add})
		go func() {
			for range st.Notifications() {
			}
		}()
		time.Sleep(5 * time.Second)
		synctest.Wait()
		if n := len(tr.peer(0).requests(protocol.MethodSubscriptionsListen)); n != 2 {
			t.Fatalf("%d listens, want 2", n)
		}
		st.Close()
		synctest.Wait()
		if n, _ := evs.count(EventRelistened); n != 1 {
			t.Errorf("EventRelistened reported %d times for 1 re-listen", n)
		}
	})
}
