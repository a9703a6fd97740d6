package engine

import (
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// EventKind says what happened to a connection.
type EventKind uint8

// The events a host cares about. Each is reported through
// [Config.OnEvent].
const (
	// EventEraPinned: negotiation finished; Version is the pinned version.
	EventEraPinned EventKind = iota + 1
	// EventRetried: a transient failure (HTTP 408/429/5xx, a network
	// error, a probe timeout on HTTP) is being retried; Err is the cause.
	EventRetried
	// EventReinitialized: a legacy session was initialized again (an
	// expired HTTP session, a re-negotiation after a lost connection).
	EventReinitialized
	// EventRespawned: the stdio server process was started again.
	EventRespawned
	// EventRelistened: a dropped subscriptions/listen stream was opened
	// again.
	EventRelistened
	// EventReplayed: a request lost with its connection, stream or
	// session was sent again under a new id; Method and ID name the new
	// request, Err the loss.
	EventReplayed
	// EventReplayRefused: such a request was not sent again, because the
	// replay policy forbids it; the caller got an outcome-unknown error.
	EventReplayRefused
	// EventInputRound: a modern input_required round was answered (MRTR);
	// Method names the request.
	EventInputRound
	// EventDropped: messages were dropped or coalesced under load; Count
	// says how many, Method which notification or request.
	EventDropped
	// EventKeepAliveTimeout: a keepalive request went unanswered (see
	// [Liveness]) and the connection is healed; Method names the
	// request, Err matches [ErrKeepAliveTimeout].
	EventKeepAliveTimeout
)

var eventNames = [...]string{
	EventEraPinned:        "era-pinned",
	EventRetried:          "retried",
	EventReinitialized:    "reinitialized",
	EventRespawned:        "respawned",
	EventRelistened:       "relistened",
	EventReplayed:         "replayed",
	EventReplayRefused:    "replay-refused",
	EventInputRound:       "input-round",
	EventDropped:          "dropped",
	EventKeepAliveTimeout: "keepalive-timeout",
}

func (k EventKind) String() string {
	if int(k) < len(eventNames) && eventNames[k] != "" {
		return eventNames[k]
	}
	return "unknown"
}

// Event is one thing that happened to a connection.
type Event struct {
	Kind    EventKind
	Time    time.Time
	Version string     // the protocol version in force, when known
	Method  string     // the request or notification concerned, if any
	ID      jsonrpc.ID // the request concerned, if any
	Count   int        // EventDropped: how many
	Err     error      // the cause, if any
	// Reason is, for EventReplayed, EventReplayRefused and EventRetried,
	// the evidence that decided, in words (outcome.go).
	Reason string
}

// MaxQueuedEvents bounds the events waiting for the dispatcher; beyond it
// the oldest is dropped (and counted in the next EventDropped).
const MaxQueuedEvents = 256

// eventQueue holds the events emitted but not yet handed to the loop, in
// emission order. Any goroutine may emit, the loop included: emitting
// never blocks and never runs user code.
type eventQueue struct {
	mu      sync.Mutex
	q       []Event       // guarded by mu
	dropped int           // guarded by mu; events dropped since the last report
	kick    chan struct{} // to the loop; made with it (startLoop)
	// queued counts the events in the dispatcher queue (owned by the
	// loop): they do not take the notifications' room there, and at most
	// MaxQueuedEvents wait there; the others wait in q.
	queued int
}

// emit reports ev through Config.OnEvent. It may be called from any
// goroutine (the loop, a caller, a healer) and never blocks: ev is
// queued, the loop moves it to the dispatcher queue, and the dispatcher
// calls the hook, in emission order and in order with the notifications
// it delivers (what is still queued when the session closes, Close
// delivers). The hook therefore never runs on the loop and may take its
// time (notifications wait behind it) or call into the session.
func (s *Session) emit(ev Event) {
	if s.cfg.OnEvent == nil {
		return
	}
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	if ev.Version == "" {
		if n := s.pub.Load().neg; n != nil {
			ev.Version = n.version
		}
	}
	e := &s.evq
	e.mu.Lock()
	if ev.Kind == EventDropped {
		// Drop counts add up while they wait: they stay exact and take
		// one entry per method.
		for i := range e.q {
			if q := &e.q[i]; q.Kind == EventDropped && q.Method == ev.Method {
				q.Count += ev.Count
				e.mu.Unlock()
				return
			}
		}
	}
	if len(e.q) >= MaxQueuedEvents {
		e.q = e.q[1:]
		e.dropped++
	}
	e.q = append(e.q, ev)
	e.mu.Unlock()
	s.startLoop() // the loop moves the events on; it makes kick
	e.signal()
}

// moveEvents hands the queued events to the dispatcher queue. It runs on
// the loop when kicked.
func (s *Session) moveEvents() {
	e := &s.evq
	room := MaxQueuedEvents - e.queued
	if room <= 0 {
		return // eventTaken kicks again
	}
	e.mu.Lock()
	var q []Event
	if e.dropped > 0 {
		q = append(q, Event{Kind: EventDropped, Time: time.Now(), Method: "events", Count: e.dropped})
		e.dropped = 0
	}
	n := min(room-len(q), len(e.q))
	q = append(q, e.q[:n]...)
	e.q = e.q[n:]
	more := len(e.q) > 0
	e.mu.Unlock()
	for i := range q {
		e.queued++
		s.lp.queue = append(s.lp.queue, dispatchItem{event: &q[i]})
	}
	if more {
		e.signal()
	}
}

// signal wakes the loop to move events; it never blocks.
func (e *eventQueue) signal() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// eventTaken is told, on the loop, that the dispatcher took it.
func (s *Session) eventTaken(it *dispatchItem) {
	if it.event == nil {
		return
	}
	s.evq.queued--
	s.evq.mu.Lock()
	more := len(s.evq.q) > 0 || s.evq.dropped > 0
	s.evq.mu.Unlock()
	if more {
		s.evq.signal()
	}
}

// flushEvents delivers, on Close's goroutine once the loop and the
// dispatcher have ended, the events they left queued (those of the
// shutdown itself, such as the last drop counts), in order.
func (s *Session) flushEvents() {
	if s.cfg.OnEvent == nil {
		return
	}
	for i := range s.lp.queue {
		if ev := s.lp.queue[i].event; ev != nil {
			s.cfg.OnEvent(*ev)
		}
	}
	e := &s.evq
	e.mu.Lock()
	q, dropped := e.q, e.dropped
	e.q, e.dropped = nil, 0
	e.mu.Unlock()
	if dropped > 0 {
		s.cfg.OnEvent(Event{Kind: EventDropped, Time: time.Now(), Method: "events", Count: dropped})
	}
	for _, ev := range q {
		s.cfg.OnEvent(ev)
	}
}
