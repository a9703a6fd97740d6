package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/jsonrpc"
)

// Manual input in the legacy era. A legacy server asks for input with a
// request that must be answered on the live connection, so it cannot be
// stored and resumed elsewhere: while a call made with
// CallOptions.ManualInput is in flight, the server's sampling,
// elicitation and roots requests are held (the oldest such call gets
// them; stdio cannot tell which call a request is for) and handed to its
// caller as an [*InputRequiredError]; the call goes on in the background
// and [Session.Resume] answers the held requests on the same session and
// waits for the call again. A held request is answered with an error
// when the caller gives no answer within MaxHeldInputWait, and the call
// is then cancelled.

// MaxHeldInputWait bounds how long a legacy server request handed to the
// caller of a manual call waits for [Session.Resume].
const MaxHeldInputWait = 5 * time.Minute

// maxHeldPerCall bounds the server requests one manual call holds.
const maxHeldPerCall = 16

// heldRequest is a legacy server request waiting for the caller.
type heldRequest struct {
	key    string     // the id as text: a string id unquoted, an integer's digits
	id     jsonrpc.ID // the server's id
	req    PendingRequest
	answer chan json.RawMessage // cap 1; nil answer: the caller gave none
}

// manualCall is a legacy call in manual mode: its result, and the server
// requests it holds for its caller.
type manualCall struct {
	held   chan *heldRequest // requests for the caller
	done   chan struct{}     // closed with res/err set
	res    json.RawMessage
	err    error
	cancel context.CancelFunc
	method string
	params json.RawMessage

	mu      sync.Mutex
	waiting map[string]*heldRequest // handed to the caller, not answered yet
	rounds  int
}

// heldCalls are a session's manual legacy calls in flight, oldest first.
type heldCalls struct {
	mu    sync.Mutex
	calls []*manualCall
}

// manualLegacyCall runs a legacy call in manual mode (see above).
func (s *Session) manualLegacyCall(ctx context.Context, method string, raw json.RawMessage, o *CallOptions) (json.RawMessage, error) {
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(s.dctx.Context, cancel)
	m := &manualCall{held: make(chan *heldRequest, maxHeldPerCall), done: make(chan struct{}), cancel: cancel,
		method: method, params: raw, waiting: map[string]*heldRequest{}}
	h := &s.held
	h.mu.Lock()
	h.calls = append(h.calls, m)
	h.mu.Unlock()
	bo := *o
	bo.ManualInput = false
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stop()
		defer cancel()
		m.res, m.err = s.callOrThrough(bg, method, raw, &bo)
		h.mu.Lock()
		h.calls = slices.DeleteFunc(h.calls, func(x *manualCall) bool { return x == m })
		h.mu.Unlock()
		close(m.done)
	}()
	return s.awaitManual(ctx, m)
}

// awaitManual waits for m's result or for the server requests it holds.
func (s *Session) awaitManual(ctx context.Context, m *manualCall) (json.RawMessage, error) {
	select {
	case <-m.done:
		return m.res, m.err
	case hr := <-m.held:
		m.mu.Lock()
		defer m.mu.Unlock()
		m.rounds++
		m.wait(hr)
		for more := true; more; {
			select {
			case next := <-m.held:
				m.wait(next)
			default:
				more = false
			}
		}
		reqs := make(map[string]PendingRequest, len(m.waiting))
		for k, w := range m.waiting {
			reqs[k] = w.req
		}
		return nil, &InputRequiredError{Method: m.method, Params: m.params, Requests: reqs, Round: m.rounds, live: m}
	case <-ctx.Done():
		// The caller gave up: so does the call, and its held requests
		// end with it (holdForCaller watches done).
		m.cancel()
		return nil, ctx.Err()
	}
}

// wait records hr as handed to the caller, under a key no other held
// request has: the id's text ("srv-1", not the JSON "\"srv-1\""); in the
// unlikely case that the string id "5" and the integer id 5 are held at
// once, the integer keeps "5" and the string takes its JSON form, and a
// string id that spells another's key gets "#2", "#3"... after its JSON
// form. It runs with m.mu held.
func (m *manualCall) wait(hr *heldRequest) {
	if old, dup := m.waiting[hr.key]; dup {
		if _, str := hr.id.Str(); !str {
			m.waiting[hr.key] = hr
			hr = old
		}
		hr.key = hr.id.String()
	}
	for n := 2; ; n++ {
		if _, dup := m.waiting[hr.key]; !dup {
			break
		}
		hr.key = hr.id.String() + "#" + strconv.Itoa(n)
	}
	m.waiting[hr.key] = hr
}

// heldKey is the key a held request is handed to the caller under.
func heldKey(id jsonrpc.ID) string {
	if s, ok := id.Str(); ok {
		return s
	}
	return id.String()
}

// resumeLegacy answers the requests m holds (a key left out gets an
// error response) and waits for the call again.
func (s *Session) resumeLegacy(ctx context.Context, m *manualCall, answers map[string]json.RawMessage) (json.RawMessage, error) {
	m.mu.Lock()
	for k := range answers {
		if _, ok := m.waiting[k]; !ok {
			m.mu.Unlock()
			return nil, fmt.Errorf("%w: %s: no held request %s (answered, or it timed out)", ErrInvalidResume, m.method, strconv.Quote(k))
		}
	}
	for k, w := range m.waiting {
		w.answer <- answers[k] // cap 1, sent once: never blocks
		delete(m.waiting, k)
	}
	m.mu.Unlock()
	return s.awaitManual(ctx, m)
}

// holdForCaller hands a legacy server request for input to the oldest
// manual call in flight and waits for its caller's answer. It reports
// false when no manual call takes it (the handler serves it then).
func (s *Session) holdForCaller(ctx context.Context, req *jsonrpc.Request) (json.RawMessage, error, bool) {
	switch route.Incoming(req.Method) {
	case route.ServeSampling, route.ServeElicitation, route.ServeRoots:
	default:
		return nil, nil, false
	}
	hr := &heldRequest{key: heldKey(req.ID), id: req.ID, req: PendingRequest{Method: req.Method, Params: req.Params}, answer: make(chan json.RawMessage, 1)}
	var m *manualCall
	h := &s.held
	h.mu.Lock()
	for _, c := range h.calls {
		select {
		case c.held <- hr:
			m = c
		default:
			continue
		}
		break
	}
	h.mu.Unlock()
	if m == nil {
		return nil, nil, false
	}
	t := time.NewTimer(MaxHeldInputWait)
	defer t.Stop()
	select {
	case a := <-hr.answer:
		if a == nil {
			return nil, jsonrpc.ErrInternal.WithMessage("the client gave no answer"), true
		}
		return a, nil, true
	case <-ctx.Done():
		return nil, ctx.Err(), true
	case <-m.done:
		return nil, jsonrpc.ErrInternal.WithMessage("the call that held this request ended"), true
	case <-t.C:
		m.cancel()
		return nil, jsonrpc.ErrInternal.WithMessage("the client's caller did not answer in time"), true
	}
}
