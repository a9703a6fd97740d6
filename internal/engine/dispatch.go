package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strconv"

	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// dispatchItem is one unit of work for the dispatcher goroutine: a
// notification for Config.OnNotification (or the handler's listeners), or
// a progress callback.
type dispatchItem struct {
	req      *jsonrpc.Request
	progress func(protocol.ProgressParams)
	pp       protocol.ProgressParams
	barrier  chan struct{} // closed by the dispatcher when it reaches this item
	restored bool          // the legacy subscriptions were restored (Config.OnRestored)
	event    *Event        // for Config.OnEvent
	key      string        // coalescing key while queued under load (see enqueue); "" if none
	size     int           // bytes of req's params while queued (see enqueue)
}

// dispatcherKey marks the context the dispatcher hands to notification
// user code, so that a call made from there does not wait for the
// dispatcher (see flushed).
type dispatcherKey struct{}

// onDispatcher reports whether ctx is (derived from) the context the
// dispatcher gives notification listeners.
func onDispatcher(ctx context.Context) bool { return ctx.Value(dispatcherKey{}) != nil }

// notification handles a server notification read from ref on the loop:
// cancellations and progress are bookkeeping done here; listen-stream
// notifications go to their stream; everything else is queued for the
// dispatcher.
func (s *Session) notification(ref *connRef, n *jsonrpc.Request) {
	lp := &s.lp
	switch route.Of(n.Method) {
	case route.Cancelled:
		var p struct {
			RequestID jsonrpc.ID `json:"requestId"`
		}
		if err := json.Unmarshal(n.Params, &p); err != nil || !p.RequestID.IsValid() {
			s.log.Debug("ignoring malformed notifications/cancelled", "params", string(n.Params))
			return
		}
		if id, ok := p.RequestID.Int64(); ok {
			if st := lp.streams[id]; st != nil {
				// The server tore a listen down: a graceful end.
				s.unpend(st.c)
				st.end(nil)
				return
			}
		}
		if cancel, ok := lp.serving[served{ref, p.RequestID}]; ok {
			cancel()
			// Entry removed when the handler goroutine reports back.
		}
		return
	case route.Progress:
		var pp protocol.ProgressParams
		if err := json.Unmarshal(n.Params, &pp); err == nil {
			if tok, err := strconv.ParseInt(string(pp.ProgressToken), 10, 64); err == nil {
				fn, ok, issued := s.pending.progress(tok)
				if ok {
					if fn != nil {
						s.enqueue(dispatchItem{progress: fn, pp: pp, req: n})
					}
					return
				}
				if issued {
					// Progress for a request of ours that has finished
					// (its response may overtake it: the reader delivers
					// plain responses itself). Nobody is listening.
					s.log.Debug("dropping progress for a finished request", "progressToken", tok)
					return
				}
			}
		}
	}
	if id, ok := subscriptionID(n.Params); ok {
		if sid, isInt := id.Int64(); isInt {
			if st := lp.streams[sid]; st != nil {
				s.streamNotify(st, n)
				return
			}
		}
		s.log.Debug("dropping notification for an unknown subscription", "subscriptionId", id, "method", n.Method)
		return
	}
	s.enqueue(dispatchItem{req: n})
}

var subscriptionKey = []byte(`"` + protocol.MetaSubscriptionID + `"`)

// subscriptionID returns _meta["io.modelcontextprotocol/subscriptionId"]
// of a notification's params.
func subscriptionID(params json.RawMessage) (jsonrpc.ID, bool) {
	if !bytes.Contains(params, subscriptionKey) {
		return jsonrpc.ID{}, false
	}
	var p struct {
		Meta struct {
			Sub jsonrpc.ID `json:"io.modelcontextprotocol/subscriptionId"`
		} `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil || !p.Meta.Sub.IsValid() {
		return jsonrpc.ID{}, false
	}
	return p.Meta.Sub, true
}

// enqueue adds it to the dispatcher queue. When the queue is full (it
// holds MaxQueuedNotifications entries, or MaxQueuedNotificationBytes of
// params), a notification equal to one still queued (list_changed of one
// kind, resources/updated of one URI) is coalesced with it; otherwise the
// oldest entries are dropped until it fits. Either way the drops are
// counted and reported (see drop): the reader and the loop never wait for
// user code.
func (s *Session) enqueue(it dispatchItem) {
	lp := &s.lp
	ol := &lp.ol
	it.key = coalesceKey(&it)
	if it.req != nil && it.barrier == nil {
		it.size = len(it.req.Params)
	}
	// Queued events (see moveEvents) take none of the notifications' room.
	full := len(lp.queue)-s.evq.queued >= MaxQueuedNotifications
	if (full || ol.queuedBytes+it.size > MaxQueuedNotificationBytes) && it.barrier == nil {
		if it.key != "" && ol.queued[it.key] > 0 {
			s.drop(it.req.Method, 1)
			return
		}
		// Drop the oldest notifications until it fits (one that is larger
		// than the whole room goes in alone).
		for full || ol.queuedBytes+it.size > MaxQueuedNotificationBytes {
			if !s.dropOldest() {
				break
			}
			full = false
		}
	}
	if it.key != "" {
		if ol.queued == nil {
			ol.queued = make(map[string]int)
		}
		ol.queued[it.key]++
	}
	ol.queuedBytes += it.size
	lp.queue = append(lp.queue, it)
}

// dropOldest drops the oldest queued notification and reports whether
// there was one. Barriers are never dropped (a caller waits for each, and
// there is at most one per call in flight, so they are bounded by the
// calls), nor are restorations and events.
func (s *Session) dropOldest() bool {
	lp := &s.lp
	i := slices.IndexFunc(lp.queue, func(q dispatchItem) bool { return q.barrier == nil && !q.restored && q.event == nil })
	if i < 0 {
		return false
	}
	old := &lp.queue[i]
	lp.ol.unqueued(old)
	s.drop(old.method(), 1)
	if i == 0 {
		lp.queue[0] = dispatchItem{}
		lp.queue = lp.queue[1:]
	} else {
		lp.queue = slices.Delete(lp.queue, i, i+1)
	}
	return true
}

// method names it for the drop counts.
func (it *dispatchItem) method() string {
	if it.req != nil {
		return it.req.Method
	}
	return protocol.NotificationProgress
}

// flushed returns a channel the dispatcher closes once it has delivered
// every notification and progress callback queued so far. It runs on the
// loop.
func (s *Session) flushed() chan struct{} {
	ch := make(chan struct{})
	s.enqueue(dispatchItem{barrier: ch})
	return ch
}

// dispatcher delivers queued notifications and progress callbacks in
// arrival order. It is the only goroutine that runs notification user code.
func (s *Session) dispatcher() {
	defer s.wg.Done()
	for {
		select {
		case it := <-s.dispatchCh:
			s.deliverItem(it)
		case <-s.closing():
			return
		}
	}
}

func (s *Session) deliverItem(it dispatchItem) {
	if it.barrier != nil {
		close(it.barrier)
		return
	}
	if it.progress != nil {
		if s.cfg.Middleware == nil || it.req == nil {
			it.progress(it.pp)
			return
		}
		s.noteIn(it.req, func(_ context.Context, n *jsonrpc.Request) {
			pp := it.pp
			if string(n.Params) != string(it.req.Params) {
				// A middleware changed the params: deliver what it passed.
				_ = json.Unmarshal(n.Params, &pp)
			}
			it.progress(pp)
		})
		return
	}
	if it.event != nil {
		s.cfg.OnEvent(*it.event)
		return
	}
	if it.restored {
		if s.cfg.OnRestored != nil {
			s.cfg.OnRestored(&s.dctx)
		}
		return
	}
	s.noteIn(it.req, s.deliverNote)
}

// deliverNote hands a server notification to Config.OnNotification and
// the handler's listeners, with ctx.
func (s *Session) deliverNote(ctx context.Context, n *jsonrpc.Request) {
	if s.cfg.OnNotification != nil {
		s.cfg.OnNotification(ctx, n)
	}
	h := s.cfg.Handler
	switch route.Of(n.Method) {
	case route.LogMessage:
		if h.LogListener != nil {
			var p protocol.LoggingMessageParams
			if json.Unmarshal(n.Params, &p) == nil {
				h.LogListener.OnLog(ctx, &p)
			}
		}
	case route.ToolsChanged:
		if h.ToolsChanged != nil {
			h.ToolsChanged.OnToolsChanged(ctx)
		}
	case route.PromptsChanged:
		if h.PromptsChanged != nil {
			h.PromptsChanged.OnPromptsChanged(ctx)
		}
	case route.ResourcesChanged:
		if h.ResourcesChanged != nil {
			h.ResourcesChanged.OnResourcesChanged(ctx)
		}
	case route.ResourceUpdated:
		if h.ResourceUpdated != nil {
			var p protocol.ResourceUpdatedParams
			if json.Unmarshal(n.Params, &p) == nil {
				h.ResourceUpdated.OnResourceUpdated(ctx, p.URI)
			}
		}
	case route.ElicitationComplete:
		s.elicitationComplete(ctx, n.Params)
	case route.TaskStatus:
		s.taskStatus(ctx, n)
	}
}
