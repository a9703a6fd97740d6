package engine

import (
	"context"
	"encoding/json"

	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Overload: what the loop does when a server sends more than the client
// serves at once (issue 15, item 2). Nothing is lost silently: a server
// request beyond [MaxConcurrentServerRequests] gets a JSON-RPC error, a
// notification the queue cannot hold is coalesced with an equal one or
// dropped, and every drop is counted, logged and reported as
// [EventDropped].

const (
	// maxQueuedRejects bounds the error answers waiting to be written for
	// server requests refused on overload. A server that outruns even
	// these writes gets its excess requests counted as dropped.
	maxQueuedRejects = 1 << 16
	// maxQueuedRejectBytes bounds the bytes of the string ids those
	// answers hold, the batch being written included: a server chooses
	// ids as long as a message, which maxQueuedRejects alone would let
	// hold 1 TiB. Ids of up to 32 bytes never reach it before
	// maxQueuedRejects does.
	maxQueuedRejectBytes = 4 << 20
	// dropReportBatch is how many unreported drops make the loop report
	// them at once; otherwise they are reported when the dispatcher takes
	// its next item, and at Close.
	dropReportBatch = 1024
)

// errClientBusy answers a server request beyond the concurrency bound.
var errClientBusy = jsonrpc.ErrInternal.WithMessage("client busy: too many concurrent server requests")

// rejected is one server request refused on overload.
type rejected struct {
	ref *connRef
	id  jsonrpc.ID
}

// overload is the loop's overload bookkeeping; owned by loop.
type overload struct {
	rejects     []rejected     // refused requests whose error answer is not written yet
	rejecting   bool           // a rejecter goroutine is writing answers
	idBytes     int            // bytes of the string ids in rejects and in the batch being written
	batchIDs    int            // of idBytes, the batch's
	unrep       map[string]int // drops per method not reported yet
	nunrep      int            // sum of unrep
	dropped     int            // every drop so far
	queued      map[string]int // coalescing keys of the queued notifications
	queuedBytes int            // bytes of the params of the queued notifications
}

// reject answers req, refused on overload, with an error: queued for the
// one rejecter goroutine, which writes the answers off the loop. It runs
// on the loop.
func (s *Session) reject(ref *connRef, req *jsonrpc.Request) {
	ol := &s.lp.ol
	n := 0
	if id, ok := req.ID.Str(); ok {
		n = len(id)
	}
	if len(ol.rejects) >= maxQueuedRejects || ol.idBytes+n > maxQueuedRejectBytes {
		s.drop(req.Method, 1)
		return
	}
	ol.rejects = append(ol.rejects, rejected{ref: ref, id: req.ID})
	ol.idBytes += n
	s.startRejecter()
}

// startRejecter hands the queued refusals to a rejecter goroutine unless
// one runs already (it reports back with evRejected). It runs on the loop.
func (s *Session) startRejecter() {
	ol := &s.lp.ol
	if ol.rejecting {
		return
	}
	// No batch is being written (any more): its ids are gone.
	ol.idBytes -= ol.batchIDs
	ol.batchIDs = 0
	if len(ol.rejects) == 0 {
		return
	}
	batch := ol.rejects
	ol.rejects, ol.rejecting, ol.batchIDs = nil, true, ol.idBytes
	s.wg.Add(1)
	go s.writeRejects(batch)
}

// writeRejects writes the error answers of batch, then tells the loop.
func (s *Session) writeRejects(batch []rejected) {
	defer s.wg.Done()
	defer s.post(event{kind: evRejected})
	for _, r := range batch {
		if s.dctx.Context.Err() != nil {
			return
		}
		wctx, cancel := context.WithTimeout(s.dctx.Context, responseWriteTimeout)
		err := s.write(wctx, r.ref, jsonrpc.NewErrorResponse(r.id, errClientBusy))
		cancel()
		if err != nil {
			s.log.Debug("refusing a server request", "id", r.id, "err", err)
		}
	}
}

// drop counts n messages of method dropped (or coalesced) under load and
// reports them once enough have gathered. It runs on the loop.
func (s *Session) drop(method string, n int) {
	ol := &s.lp.ol
	if ol.unrep == nil {
		ol.unrep = make(map[string]int)
	}
	ol.unrep[method] += n
	ol.nunrep += n
	ol.dropped += n
	if ol.nunrep >= dropReportBatch {
		s.reportDrops()
	}
}

// reportDrops logs and emits the drops not reported yet, one
// [EventDropped] per method. It runs on the loop.
func (s *Session) reportDrops() {
	ol := &s.lp.ol
	if ol.nunrep == 0 {
		return
	}
	for m, n := range ol.unrep {
		s.log.Warn("dropped messages under load", "method", m, "count", n, "total", ol.dropped)
		s.emit(Event{Kind: EventDropped, Method: m, Count: n})
	}
	clear(ol.unrep)
	ol.nunrep = 0
}

// coalesceKey is the key under which a queued notification absorbs an
// equal one: the method for list_changed, the method and URI for
// resources/updated; "" when it cannot be coalesced.
func coalesceKey(it *dispatchItem) string {
	if it.req == nil {
		return ""
	}
	switch route.Of(it.req.Method) {
	case route.ToolsChanged, route.PromptsChanged, route.ResourcesChanged:
		return it.req.Method
	case route.ResourceUpdated:
		var p protocol.ResourceUpdatedParams
		if json.Unmarshal(it.req.Params, &p) == nil && p.URI != "" {
			return it.req.Method + "\x00" + p.URI
		}
	}
	return ""
}

// unqueued updates the coalescing keys and the bytes queued for it,
// leaving the queue.
func (ol *overload) unqueued(it *dispatchItem) {
	ol.queuedBytes -= it.size
	if k := it.key; k != "" {
		if ol.queued[k]--; ol.queued[k] <= 0 {
			delete(ol.queued, k)
		}
	}
}
