package engine

import (
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// One behaviour in both eras for handler failures. In the modern era a
// handler that fails an input request ends the call with an [*InputError]
// (input.go). In the legacy era the handler answers a server request, and
// the server then decides what becomes of the call that caused it; when
// that call fails with a JSON-RPC error, the caller gets the same
// [*InputError] as in the modern era (same Method, InputMethod and Err,
// hence the same message), with the server's error in Server.
//
// A legacy server request is tied to the call that caused it:
//
//   - on a connection that tells on which request's response stream a
//     message arrived ([transport.OriginReader]: Streamable HTTP), to the
//     call whose POST response stream carried the request; a request on
//     the standalone GET stream is tied to no call;
//   - elsewhere (stdio, WebSocket, memory pipes, HTTP+SSE: nothing on the
//     wire says which call a server request is for), to the one call in
//     flight when exactly one request of this client is pending on the
//     connection when the server request arrives, else to no call.
//
// A failure is remembered on the tied call only while it is still pending
// (under the pending table's mutex), and only the first one.

// tie is a legacy server request's tied call: the call, the id it was
// pending under (the call may be recycled once it settled; an id is never
// issued twice) and its method.
type tie struct {
	c      *call
	id     int64
	method string
}

// tieOf returns the tie of a legacy server request that arrived on ref
// (on the response stream of request on, when valid), or nil. It runs on
// the loop.
func (s *Session) tieOf(ref *connRef, on jsonrpc.ID) *tie {
	if ref == nil {
		return nil
	}
	p := &s.pending
	p.mu.Lock()
	defer p.mu.Unlock()
	var c *call
	if _, linked := ref.conn.(transport.OriginReader); linked {
		if id, ok := on.Int64(); ok {
			c = p.calls[id]
		}
	} else {
		c = p.sole(ref)
	}
	if c == nil || c.ref != ref || c.internal || c.stream != nil {
		return nil
	}
	return &tie{c: c, id: c.id, method: c.method}
}

// sole returns the call pending on ref when it is the only request
// pending there, else nil. p.mu is held.
func (p *pendingTable) sole(ref *connRef) *call {
	var only *call
	for _, c := range p.calls {
		if c.ref != ref {
			continue
		}
		if only != nil {
			return nil
		}
		only = c
	}
	return only
}

// handlerFailed remembers on the tied call, if it is still pending, that
// the handler failed the server request inputMethod with err.
func (p *pendingTable) handlerFailed(t *tie, inputMethod string, err error) {
	if t == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls[t.id] == t.c && t.c.failed == nil {
		t.c.failed = &InputError{Method: t.method, InputMethod: inputMethod, Err: err}
	}
}

// failedWith is the error of call c, answered with the JSON-RPC error e by
// the server: the handler failure tied to c (see above) with e, or nil
// when there was none. c has settled: only its caller reads it.
func (c *call) failedWith(e *jsonrpc.Error) error {
	if c.failed == nil {
		return nil
	}
	f := *c.failed
	f.Server = e
	return &f
}
