package testserver

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
)

// maxStreamLog bounds the events a resumable stream keeps for replay.
const maxStreamLog = 1024

type sseEvent struct {
	seq    int
	data   []byte // one encoded JSON-RPC message
	final  bool   // the response that completes the stream
	status int    // HTTP status if the stream is answered by this event alone
}

// eventStream is the server side of one SSE response stream: the POST
// stream of one request, a legacy standalone GET stream, or the stream of a
// deprecated HTTP+SSE session. Producers append events (never blocking);
// the HTTP handler goroutine currently attached pulls and writes them, so
// only that goroutine ever touches its ResponseWriter. Legacy streams keep
// their events (bounded) for Last-Event-ID replay.
type eventStream struct {
	s         *Server
	id        string // stream id in event ids; "" means no event ids (modern)
	eventName string // SSE event field; "" for none, "message" for HTTP+SSE
	keep      bool   // keep written events for replay

	mu      sync.Mutex
	events  []sseEvent    // guarded by mu
	nextSeq int           // guarded by mu; seq of the next appended event (starts at 1)
	sent    int           // guarded by mu; seq of the first event no writer wrote yet
	final   bool          // guarded by mu; the final event was appended
	closed  bool          // guarded by mu; no more events will come
	changed chan struct{} // guarded by mu; closed and replaced on every change
	owner   chan struct{} // guarded by mu; closed to detach the attached writer
}

func newEventStream(s *Server, id string, keep bool) *eventStream {
	return &eventStream{s: s, id: id, keep: keep, nextSeq: 1, sent: 1, changed: make(chan struct{})}
}

// send implements outbound.
func (st *eventStream) send(m jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(m)
	if err != nil {
		return err
	}
	st.push(b, false, 0)
	return nil
}

func (st *eventStream) push(b []byte, final bool, status int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed || st.final {
		return
	}
	st.events = append(st.events, sseEvent{seq: st.nextSeq, data: b, final: final, status: status})
	st.nextSeq++
	if len(st.events) > maxStreamLog {
		st.events = st.events[len(st.events)-maxStreamLog:]
	}
	if final {
		st.final = true
	}
	st.signalLocked()
}

func (st *eventStream) signalLocked() {
	close(st.changed)
	st.changed = make(chan struct{})
}

// closeStream ends the stream: attached writers finish what is queued and
// return.
func (st *eventStream) closeStream() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.closed {
		st.closed = true
		st.signalLocked()
	}
}

func (st *eventStream) attached() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.owner != nil
}

type serveOpts struct {
	from       int    // first seq to write; 0 means the first not yet written
	jsonOK     bool   // answer with application/json when the only event is the final one
	flushEarly bool   // send the headers at once (GET streams)
	priming    bool   // write a priming event (id, retry, empty data) first
	breakAfter bool   // end the response right after the headers/priming (FaultBreakStream)
	preamble   string // raw SSE text written first (the HTTP+SSE endpoint event)
	header     http.Header
}

// serve attaches the calling handler goroutine to the stream and writes
// events until the stream completes, the client goes away, the server
// closes or another writer attaches.
func (st *eventStream) serve(w http.ResponseWriter, r *http.Request, o serveOpts) {
	mine, cursor := st.attach(o.from)
	defer st.detach(mine)
	for k, vs := range o.header {
		w.Header()[k] = vs
	}
	started := false
	for {
		evs, ch, fin, closed := st.pending(cursor)
		if !started {
			if len(evs) == 0 && !closed && !o.flushEarly {
				if !st.wait(r, ch, mine) {
					return
				}
				continue
			}
			if !st.start(w, evs, o) {
				return
			}
			started = true
		}
		next, done := st.writeEvents(w, evs, cursor)
		cursor = next
		if done {
			return
		}
		flush(w)
		if closed || fin && len(evs) == 0 && cursor >= st.seqEnd() {
			return
		}
		if !st.wait(r, ch, mine) {
			return
		}
	}
}

// attach makes the caller the stream's one writer (ending the previous
// one's) and returns its ownership token and first sequence number.
func (st *eventStream) attach(from int) (chan struct{}, int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.owner != nil {
		close(st.owner)
	}
	mine := make(chan struct{})
	st.owner = mine
	if from <= 0 {
		from = st.sent
	}
	return mine, from
}

// detach gives up ownership unless another writer took it.
func (st *eventStream) detach(mine chan struct{}) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.owner == mine {
		st.owner = nil
	}
}

// pending returns the events from cursor on and the stream's state.
func (st *eventStream) pending(cursor int) (evs []sseEvent, changed chan struct{}, fin, closed bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, ev := range st.events {
		if ev.seq >= cursor {
			evs = append(evs, ev)
		}
	}
	return evs, st.changed, st.final, st.closed
}

// start writes the response's head: a plain JSON answer when that is all
// there is (and allowed), else the event-stream headers, preamble and
// priming event. It reports whether events should follow.
func (st *eventStream) start(w http.ResponseWriter, evs []sseEvent, o serveOpts) bool {
	if o.jsonOK && len(evs) == 1 && evs[0].final {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(statusOr(evs[0].status))
		_, _ = w.Write(evs[0].data)
		st.markSent(evs[0].seq + 1)
		return false
	}
	status := http.StatusOK
	if len(evs) > 0 && evs[0].final {
		status = statusOr(evs[0].status)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	if o.preamble != "" {
		_, _ = w.Write([]byte(o.preamble))
	}
	if o.priming && st.id != "" {
		fmt.Fprintf(w, "id: %s_0\nretry: %d\ndata: \n\n", st.id, st.s.opts.SSERetry.Milliseconds())
	}
	flush(w)
	if o.breakAfter {
		if !o.priming {
			_, _ = w.Write([]byte(": stream breaks here\n\n"))
			flush(w)
		}
		return false
	}
	return true
}

// writeEvents writes evs and returns the next cursor; done is true when
// the final event was written or the client went away.
func (st *eventStream) writeEvents(w http.ResponseWriter, evs []sseEvent, cursor int) (next int, done bool) {
	for _, ev := range evs {
		var b strings.Builder
		if st.id != "" {
			fmt.Fprintf(&b, "id: %s_%d\n", st.id, ev.seq)
		}
		if st.eventName != "" {
			fmt.Fprintf(&b, "event: %s\n", st.eventName)
		}
		b.WriteString("data: ")
		b.Write(ev.data)
		b.WriteString("\n\n")
		if _, err := w.Write([]byte(b.String())); err != nil {
			return cursor, true
		}
		cursor = ev.seq + 1
		st.markSent(cursor)
		if ev.final {
			flush(w)
			return cursor, true
		}
	}
	return cursor, false
}

// flush sends what w buffered, when it can.
func flush(w http.ResponseWriter) {
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
}

func (st *eventStream) seqEnd() int {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.nextSeq
}

func (st *eventStream) markSent(next int) {
	st.mu.Lock()
	if next > st.sent {
		st.sent = next
	}
	if !st.keep {
		// Modern streams have no replay: drop what was written.
		i := 0
		for i < len(st.events) && st.events[i].seq < next {
			i++
		}
		st.events = st.events[i:]
	}
	st.mu.Unlock()
}

// wait blocks until the stream changes; false means the writer must stop.
func (st *eventStream) wait(r *http.Request, ch, mine chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-r.Context().Done():
		return false
	case <-st.s.done:
		return false
	case <-mine:
		return false
	}
}

func statusOr(s int) int {
	if s == 0 {
		return http.StatusOK
	}
	return s
}

// parseEventID splits "<stream>_<seq>".
func parseEventID(id string) (stream string, seq int, ok bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return id[:i], n, true
}
