package engine

import (
	"sync"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// pendingTable is the table of requests awaiting a response: one state
// struct with its transitions (register, resolve, retire), guarded by a
// mutex instead of owned by the loop (STYLE "where the anchors disagree"
// #2), so that a plain call costs no round trip through the loop: the
// caller registers its request itself and the reader resolves it itself.
//
// The mutex is held only for map and field updates and non-blocking
// channel sends; never across I/O, user code or a send that can block.
//
// The loop still decides when a caller may register directly: it opens the
// table (open, ref, neg) when the state machine enters a ready state and
// shuts it, under the same mutex, whenever it leaves one or loses the
// current connection. A shut table sends callers through the loop
// (evRegister), which holds them while not ready, exactly as before.
type pendingTable struct {
	mu   sync.Mutex
	open bool      // user calls may register directly, on ref with neg
	ref  *connRef  // the connection direct registrations go to
	neg  *negState // the negotiation direct registrations see
	// cur is the current connection, where negotiation traffic registers
	// directly whatever the state (the loop's rule for it); nil before the
	// first connection and once the session failed or closed.
	cur    *connRef
	nextID int64           // last request id issued
	calls  map[int64]*call // requests awaiting a response, by id
	tokens map[int64]*call // progress token → call; made at its first entry
	heals  int             // consecutive heals without a successful response
}

func (p *pendingTable) init() {
	p.calls = make(map[int64]*call)
}

// setOpen opens the table for direct registrations on ref with neg, or
// shuts it (ready false). It is called by the loop.
func (p *pendingTable) setOpen(ready bool, ref *connRef, neg *negState) {
	p.mu.Lock()
	p.open = ready && ref != nil && neg != nil
	p.ref, p.neg = ref, neg
	if !p.open {
		p.ref, p.neg = nil, nil
	}
	p.mu.Unlock()
}

// shut stops direct registrations on ref (when ref is where they go).
// Calls then go through the loop, which reopens the table when it enters a
// ready state again.
func (p *pendingTable) shut(ref *connRef) {
	p.mu.Lock()
	if ref != nil && ref == p.ref {
		p.open, p.ref, p.neg = false, nil, nil
	}
	p.mu.Unlock()
}

// setCurrent makes ref the connection negotiation traffic registers on.
// It is called by the loop when it installs ref.
func (p *pendingTable) setCurrent(ref *connRef) {
	p.mu.Lock()
	p.cur = ref
	p.mu.Unlock()
}

// add registers c on ref with neg. p.mu is held.
func (p *pendingTable) add(c *call, ref *connRef, neg *negState) {
	p.nextID++
	c.id = p.nextID
	c.ref = ref
	c.neg = neg
	p.calls[c.id] = c
	if c.progress != nil || c.timed {
		if c.token == 0 {
			c.token = c.id
		}
		if p.tokens == nil {
			p.tokens = make(map[int64]*call)
		}
		p.tokens[c.token] = c
	}
}

// tryRegister registers c directly and reports whether it did: a user call
// when the table is open (on ref, with neg); negotiation traffic on the
// current connection in any state until the session failed or closed
// (with last, the latest negotiation), as the loop would. It reports false
// when c must go through the loop: a user call while the session is not
// ready (negotiating, healing, failed, closed), negotiation traffic once
// there is no current connection, or a listen stream.
func (p *pendingTable) tryRegister(c *call, last *negState) bool {
	if c.stream != nil {
		return false
	}
	p.mu.Lock()
	var ok bool
	if c.internal {
		if ok = p.cur != nil; ok {
			p.add(c, p.cur, last)
		}
	} else if ok = p.open; ok {
		p.add(c, p.ref, p.neg)
	}
	p.mu.Unlock()
	return ok
}

// register registers c on ref with neg. It is called by the loop.
func (p *pendingTable) register(c *call, ref *connRef, neg *negState) {
	p.mu.Lock()
	p.add(c, ref, neg)
	p.mu.Unlock()
}

// drop removes c (which p.mu protects) from the maps. p.mu is held.
func (p *pendingTable) drop(c *call) {
	delete(p.calls, c.id)
	if c.token != 0 && p.tokens[c.token] == c {
		delete(p.tokens, c.token)
	}
}

// remove removes c if it is still pending and reports whether it was.
func (p *pendingTable) remove(c *call) bool {
	if c.id == 0 {
		return false
	}
	p.mu.Lock()
	ok := p.calls[c.id] == c
	if ok {
		p.drop(c)
	}
	p.mu.Unlock()
	return ok
}

// takeOn removes and returns the call pending with id on ref, or nil.
func (p *pendingTable) takeOn(id int64, ref *connRef) *call {
	p.mu.Lock()
	c := p.calls[id]
	if c != nil && c.ref == ref {
		p.drop(c)
	} else {
		c = nil
	}
	p.mu.Unlock()
	return c
}

// succeeded notes that a user call got a successful response: the heal
// counter starts again. Negotiation traffic and the engine's own
// re-subscriptions after a heal do not count: a server that dies right
// after answering them is dying after every start.
func (p *pendingTable) succeeded(c *call, m *jsonrpc.Response) {
	if !c.internal && !c.restoring && m.Error == nil {
		p.heals = 0
	}
}

// resolveDirect is the reader's fast path for a response: when it answers
// a pending call that is not a listen stream nor a call whose result must
// wait for the dispatcher (a plain call or negotiation traffic), the call is removed
// and returned for the reader to deliver. Otherwise it returns nil and the
// response goes to the loop as before.
func (p *pendingTable) resolveDirect(m *jsonrpc.Response) *call {
	return p.settle(m, true)
}

// resolve removes and returns the pending call a response answers, or nil
// (unknown or abandoned). It is called by the loop.
func (p *pendingTable) resolve(m *jsonrpc.Response) *call {
	return p.settle(m, false)
}

// settle removes the pending call m answers, records its success and
// returns it; nil when there is none or, with direct, when the call is not
// one the reader may deliver itself (see resolveDirect).
func (p *pendingTable) settle(m *jsonrpc.Response, direct bool) *call {
	n, ok := m.ID.Int64()
	if !ok {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.calls[n]
	if c == nil || direct && (c.stream != nil || c.flush || c.progress != nil) {
		return nil
	}
	p.drop(c)
	p.succeeded(c, m)
	return c
}

// take removes and returns every pending call on ref (every pending call
// when ref is nil); when ref is the connection direct registrations go
// to, or ref is nil, the table is shut as well, and with ref nil (the
// session failed or closed) negotiation traffic no longer registers
// directly either. It is called by the loop.
func (p *pendingTable) take(ref *connRef) []*call {
	p.mu.Lock()
	if ref == nil || ref == p.ref {
		p.open, p.ref, p.neg = false, nil, nil
	}
	if ref == nil {
		p.cur = nil
	}
	var out []*call
	for _, c := range p.calls {
		if ref == nil || c.ref == ref {
			out = append(out, c)
		}
	}
	for _, c := range out {
		p.drop(c)
	}
	p.mu.Unlock()
	return out
}

// progress signals the call that owns progress token tok (its timeout
// restarts) and returns its progress callback. ok is false when no pending
// call owns tok; issued then says whether tok is one of ours (a call that
// has finished).
func (p *pendingTable) progress(tok int64) (fn func(protocol.ProgressParams), ok, issued bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.tokens[tok]
	if c == nil {
		return nil, false, tok > 0 && tok <= p.nextID
	}
	if c.progressed != nil {
		select {
		case c.progressed <- struct{}{}:
		default:
		}
	}
	return c.progress, true, true
}

// healed counts one more heal and returns the count.
func (p *pendingTable) healed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.heals++
	return p.heals
}
