package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// inputRequest is one entry of an InputRequiredResult's inputRequests.
type inputRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// inputRequired is a parsed InputRequiredResult.
type inputRequired struct {
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  json.RawMessage         `json:"requestState"`
	keys          []string                // sorted keys of InputRequests
	hasState      bool
}

// parseInputRequired reads and checks one input_required result of
// method: its shape, the count of its input requests, and every request
// against the declared capabilities.
func (s *Session) parseInputRequired(method string, result json.RawMessage) (*inputRequired, error) {
	var ir inputRequired
	if err := json.Unmarshal(result, &ir); err != nil {
		return nil, &ProtocolError{Method: method, Reason: "malformed InputRequiredResult: " + err.Error(), Err: ErrInvalidResponse}
	}
	ir.hasState = len(ir.RequestState) > 0 && string(ir.RequestState) != "null"
	if ir.hasState && ir.RequestState[0] != '"' {
		return nil, &ProtocolError{Method: method, Reason: "requestState is not a string", Err: ErrInvalidResponse}
	}
	if !ir.hasState {
		ir.RequestState = nil
	}
	if len(ir.InputRequests) > MaxInputRequests {
		return nil, &ProtocolError{Method: method, Reason: fmt.Sprintf("%d input requests (more than %d)", len(ir.InputRequests), MaxInputRequests), Err: ErrInvalidResponse}
	}
	if len(ir.InputRequests) == 0 && !ir.hasState {
		return nil, &ProtocolError{Method: method, Reason: "InputRequiredResult has neither inputRequests nor requestState", Err: ErrInvalidResponse}
	}
	ir.keys = make([]string, 0, len(ir.InputRequests))
	for k, r := range ir.InputRequests {
		if reason := s.checkInput(r); reason != "" {
			return nil, &ProtocolError{Method: method, Reason: "input request " + strconv.Quote(k) + ": " + reason, Err: ErrUnexpectedInputRequest}
		}
		ir.keys = append(ir.keys, k)
	}
	slices.Sort(ir.keys)
	return &ir, nil
}

// inputRound handles one parsed input_required result of method: it
// fulfils every input request concurrently through the handler, and
// returns the params of the retry: the original params with
// inputResponses (same keys) and requestState (echoed byte for byte;
// absent when the server sent none).
func (s *Session) inputRound(ctx context.Context, method string, original json.RawMessage, ir *inputRequired) (json.RawMessage, error) {
	answers, err := s.fulfil(ctx, method, ir.keys, ir.InputRequests)
	if err != nil {
		return nil, err
	}
	return retryParams(original, ir.keys, answers, ir.RequestState), nil
}

// retryParams builds the params of an MRTR retry: original with
// inputResponses (answers[i] answers keys[i]) and requestState (raw JSON
// string, nil for none) in front.
func retryParams(original json.RawMessage, keys []string, answers []json.RawMessage, state json.RawMessage) json.RawMessage {
	var m []byte
	if len(keys) > 0 {
		m = append(m, `"inputResponses":{`...)
		for i, k := range keys {
			if i > 0 {
				m = append(m, ',')
			}
			kj, _ := json.Marshal(k)
			m = append(m, kj...)
			m = append(m, ':')
			m = append(m, answers[i]...)
		}
		m = append(m, '}')
	}
	if len(state) > 0 {
		if len(m) > 0 {
			m = append(m, ',')
		}
		m = append(m, `"requestState":`...)
		m = append(m, state...)
	}
	return prependMembers(original, m)
}

// checkInput returns why an input request may not be served, or "".
func (s *Session) checkInput(r inputRequest) string {
	caps := &s.modernCaps
	switch r.Method {
	case protocol.MethodSamplingCreateMessage:
		if caps.Sampling == nil || s.cfg.Handler.Sampler == nil {
			return "sampling was not declared"
		}
	case protocol.MethodElicitationCreate:
		var p struct {
			Mode string `json:"mode"`
		}
		if len(r.Params) > 0 && json.Unmarshal(r.Params, &p) != nil {
			return "malformed elicitation params"
		}
		switch p.Mode {
		case "", protocol.ElicitModeForm:
			if !formDeclared(caps.Elicitation) || s.cfg.Handler.Elicitor == nil {
				return "form-mode elicitation was not declared"
			}
		case protocol.ElicitModeURL:
			if caps.Elicitation == nil || caps.Elicitation.URL == nil || s.cfg.Handler.URLElicitor == nil {
				return "URL-mode elicitation was not declared"
			}
		default:
			return "unknown elicitation mode " + strconv.Quote(p.Mode)
		}
	case protocol.MethodRootsList:
		if caps.Roots == nil || s.cfg.Handler.RootsLister == nil {
			return "roots were not declared"
		}
	default:
		return "unknown method " + strconv.Quote(r.Method)
	}
	return ""
}

// AnswerInputs answers input requests that reach the client outside a
// call's own rounds — the inputRequests of a task of the modern tasks
// extension in input_required, found by polling tasks/get — exactly as an
// MRTR round's: each checked against the modern capabilities declared,
// all served concurrently through the middleware and the handler. method
// is the request the task runs (tools/call). More than [MaxInputRequests]
// requests at once are a [*ProtocolError] matching [ErrInvalidResponse],
// and none is served; a request the client may not serve is a
// [*ProtocolError] matching [ErrUnexpectedInputRequest]; a handler's
// failure an [*InputError].
func (s *Session) AnswerInputs(ctx context.Context, method string, reqs map[string]PendingRequest) (map[string]json.RawMessage, error) {
	if len(reqs) > MaxInputRequests {
		// As in a round's own result (parseInputRequired): each request
		// is a handler call, and they all run at once.
		return nil, &ProtocolError{Method: method, Reason: fmt.Sprintf("%d input requests (more than %d)", len(reqs), MaxInputRequests), Err: ErrInvalidResponse}
	}
	keys := make([]string, 0, len(reqs))
	in := make(map[string]inputRequest, len(reqs))
	for k, r := range reqs {
		ir := inputRequest(r)
		if reason := s.checkInput(ir); reason != "" {
			return nil, &ProtocolError{Method: method, Reason: "input request " + strconv.Quote(k) + ": " + reason, Err: ErrUnexpectedInputRequest}
		}
		keys = append(keys, k)
		in[k] = ir
	}
	slices.Sort(keys)
	answers, err := s.fulfil(ctx, method, keys, in)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(keys))
	for i, k := range keys {
		out[k] = answers[i]
	}
	return out, nil
}

// fulfil runs every input request concurrently, each with a context that
// ends with ctx, with the first failure, or with Close. Elicitation
// decline/cancel are answers; a handler error abandons the request with an
// [*InputError] (OPEN-QUESTIONS C18).
func (s *Session) fulfil(ctx context.Context, method string, keys []string, reqs map[string]inputRequest) ([]json.RawMessage, error) {
	answers := make([]json.RawMessage, len(keys))
	if len(keys) == 0 {
		return answers, nil
	}
	hctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(s.dctx.Context, cancel)
	defer stop()
	g, gctx := errgroup.WithContext(hctx)
	for i, k := range keys {
		r := reqs[k]
		g.Go(func() error {
			raw, err := s.serveThrough(gctx, k, r.Method, r.Params, s.modernCaps)
			if err != nil {
				if he, ok := errors.AsType[*handlerError](err); ok {
					return &InputError{Method: method, Key: k, InputMethod: r.Method, Err: he.err}
				}
				if je, ok := errors.AsType[*jsonrpc.Error](err); ok {
					return &ProtocolError{Method: method, Reason: "input request " + strconv.Quote(k) + ": " + je.Message, Err: ErrUnexpectedInputRequest}
				}
				return err
			}
			answers[i] = raw
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if s.dctx.Context.Err() != nil {
			return nil, ErrClosed
		}
		return nil, err
	}
	return answers, nil
}

// PendingRequest is one input request a manual-mode call hands back: the
// method (elicitation/create, sampling/createMessage, roots/list) and its
// raw params, as the server sent them.
type PendingRequest struct {
	Method string          `json:"method"`
	Params json.RawMessage `json:"params,omitempty"`
}

// InputRequiredError ends a modern call made with
// [CallOptions.ManualInput] at an input_required round whose input
// requests the caller answers itself. It holds everything the retry
// needs, so it can be stored (it encodes as JSON) and given to
// [Session.Resume] later, by another session or process: the original
// params, the requests, the opaque requestState (kept byte for byte) and
// the rounds so far.
type InputRequiredError struct {
	Method       string                    `json:"method"`
	Params       json.RawMessage           `json:"params,omitempty"`
	Requests     map[string]PendingRequest `json:"inputRequests"`
	RequestState json.RawMessage           `json:"requestState,omitempty"`
	Round        int                       `json:"round"`

	live *manualCall // legacy: the call in flight whose requests are held
}

// ErrInvalidResume is matched by the errors of [Session.Resume] for a
// stored state or answers it cannot send.
var ErrInvalidResume = errors.New("invalid state to resume")

// Live reports a legacy call's held requests: they can be answered only
// by Resume on the same session, with this very value (a copy decoded
// from JSON is not live).
func (e *InputRequiredError) Live() bool { return e.live != nil }

func (e *InputRequiredError) Error() string {
	return fmt.Sprintf("needs input (%d request(s), round %d)", len(e.Requests), e.Round)
}

// pending hands the round back to the caller (manual mode).
func (ir *inputRequired) pending(method string, cs *callState) error {
	reqs := make(map[string]PendingRequest, len(ir.InputRequests))
	for k, r := range ir.InputRequests {
		reqs[k] = PendingRequest(r)
	}
	return &InputRequiredError{Method: method, Params: cs.raw, Requests: reqs, RequestState: ir.RequestState, Round: cs.rounds}
}

// Resume continues a call that ended with p: it sends the retry carrying
// answers (keyed as p.Requests; a key left out is one the server may ask
// again) and p's requestState, and drives the call on as [Session.Call]
// does. A later round that needs input again ends with a new
// [*InputRequiredError] when opts.ManualInput is set, and is answered by
// the handler otherwise. Modern era only ([ErrNotModern]).
func (s *Session) Resume(ctx context.Context, p *InputRequiredError, answers map[string]json.RawMessage, opts *CallOptions) (json.RawMessage, error) {
	if p != nil && p.live != nil {
		return s.resumeLegacy(ctx, p.live, answers)
	}
	if s.Era() != negotiation.EraModern {
		return nil, ErrNotModern
	}
	if p == nil || !mrtrMethod(p.Method) {
		return nil, fmt.Errorf("%w: not a pending tools/call, prompts/get or resources/read", ErrInvalidResume)
	}
	if len(p.RequestState) > 0 && p.RequestState[0] != '"' {
		return nil, fmt.Errorf("%w: %s: requestState is not a JSON string", ErrInvalidResume, p.Method)
	}
	raw := p.Params
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if _, _, _, err := topLevelMember(raw, "inputResponses"); err != nil {
		return nil, fmt.Errorf("%w: %s: params: %w", ErrInvalidResume, p.Method, err)
	}
	keys := make([]string, 0, len(answers))
	for k, a := range answers {
		if _, ok := p.Requests[k]; !ok {
			return nil, fmt.Errorf("%w: %s: no input request %s", ErrInvalidResume, p.Method, strconv.Quote(k))
		}
		if !json.Valid(a) {
			return nil, fmt.Errorf("%w: %s: the answer to %s is not JSON", ErrInvalidResume, p.Method, strconv.Quote(k))
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	vals := make([]json.RawMessage, len(keys))
	for i, k := range keys {
		vals[i] = answers[k]
	}
	var o CallOptions
	if opts != nil {
		o = *opts
	}
	o.resume = &callState{method: p.Method, raw: raw, cur: retryParams(raw, keys, vals, p.RequestState), rounds: p.Round}
	return s.callOrThrough(ctx, p.Method, raw, &o)
}

// MaxURLElicitationWait bounds how long a call that met -32042 waits for
// the servers' notifications/elicitation/complete once the URLElicitor
// accepted every URL, before it gives up and returns the
// [*protocol.URLElicitationRequiredError].
const MaxURLElicitationWait = 5 * time.Minute

// maxURLElicitations bounds the elicitations one -32042 error may carry.
const maxURLElicitations = 16

// maxRecentCompletions bounds the completed elicitation ids remembered
// for a call that registers its wait after the notification came.
const maxRecentCompletions = 64

// urlWaits are the elicitation ids calls wait to see completed, and the
// ids seen completed lately (a notification may overtake the error).
type urlWaits struct {
	mu     sync.Mutex
	m      map[string]*urlWait
	recent []string
}

// urlWait is one elicitation id waited for: its channel, closed when it
// completes, and how many registrations (wait) have not been forgotten
// yet: calls whose -32042 answers name the same id share it.
type urlWait struct {
	ch chan struct{}
	n  int
}

// wait registers id and returns the channel closed when it completes.
// Each wait is matched by a forget.
func (w *urlWaits) wait(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]*urlWait{}
	}
	uw, ok := w.m[id]
	if !ok {
		uw = &urlWait{ch: make(chan struct{})}
		if slices.Contains(w.recent, id) {
			close(uw.ch)
			return uw.ch
		}
		w.m[id] = uw
	}
	uw.n++
	return uw.ch
}

// done closes the channel of id; unknown ids are ignored.
func (w *urlWaits) done(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if uw, ok := w.m[id]; ok {
		close(uw.ch)
		delete(w.m, id)
		return
	}
	if len(w.recent) == maxRecentCompletions {
		w.recent = slices.Delete(w.recent, 0, 1)
	}
	w.recent = append(w.recent, id)
}

// forget undoes the waits that returned chans for ids (chans[i] for
// ids[i]): an id nobody waits for any more is dropped. A wait that ended
// (the id completed, and may be waited for anew) has nothing to undo.
func (w *urlWaits) forget(ids []string, chans []chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for i, id := range ids {
		if uw, ok := w.m[id]; ok && uw.ch == chans[i] {
			if uw.n--; uw.n <= 0 {
				delete(w.m, id)
			}
		}
	}
}

// urlElicitationError reads a -32042 error answering method.
func urlElicitationError(method string, e *jsonrpc.Error) error {
	var data protocol.URLElicitationRequiredData
	if json.Unmarshal(e.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxURLElicitations {
		return &ProtocolError{Method: method, Reason: "malformed URLElicitationRequiredError data", Err: joinErrs(ErrInvalidResponse, e)}
	}
	for _, el := range data.Elicitations {
		if el.Mode != protocol.ElicitModeURL || el.URL == "" || el.ElicitationID == "" {
			return &ProtocolError{Method: method, Reason: "URLElicitationRequiredError lists an elicitation that is not a URL elicitation with an id", Err: joinErrs(ErrInvalidResponse, e)}
		}
	}
	return &protocol.URLElicitationRequiredError{Elicitations: data.Elicitations, Err: e}
}

// urlElicit handles a legacy -32042 answer: with a URLElicitor declared,
// it presents every URL, waits (bounded by ctx and MaxURLElicitationWait)
// for each elicitation to complete, and returns nil: the request may be
// sent again. Otherwise, or when the user did not accept, it returns the
// typed error.
func (s *Session) urlElicit(ctx context.Context, method string, e *jsonrpc.Error) error {
	err := urlElicitationError(method, e)
	ue, ok := errors.AsType[*protocol.URLElicitationRequiredError](err)
	if !ok || s.cfg.Handler.URLElicitor == nil || s.legacyCaps.Elicitation == nil || s.legacyCaps.Elicitation.URL == nil {
		return err
	}
	ids := make([]string, len(ue.Elicitations))
	chans := make([]chan struct{}, len(ue.Elicitations))
	for i, el := range ue.Elicitations {
		ids[i], chans[i] = el.ElicitationID, s.urls.wait(el.ElicitationID)
	}
	defer s.urls.forget(ids, chans)
	for i := range ue.Elicitations {
		res, herr := s.presentURL(ctx, ids[i], &ue.Elicitations[i])
		if herr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return &InputError{Method: method, Key: ids[i], InputMethod: protocol.MethodElicitationCreate, Err: herr}
		}
		if res.Action != protocol.ElicitAccept {
			return ue
		}
	}
	t := time.NewTimer(MaxURLElicitationWait)
	defer t.Stop()
	for _, ch := range chans {
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.closing():
			return ErrClosed
		case <-t.C:
			return ue
		}
	}
	return nil
}

// elicitationComplete delivers notifications/elicitation/complete: to the
// calls waiting for it, then to the listener. It runs on the dispatcher.
func (s *Session) elicitationComplete(ctx context.Context, params json.RawMessage) {
	var p protocol.ElicitationCompleteParams
	if json.Unmarshal(params, &p) != nil || p.ElicitationID == "" {
		return
	}
	s.urls.done(p.ElicitationID)
	if l := s.cfg.Handler.ElicitationDone; l != nil {
		l.OnElicitationComplete(ctx, p.ElicitationID)
	}
}

// presentURL shows one URL elicitation of a -32042 answer to the handler,
// as an incoming elicitation/create through the middleware (as a modern
// MRTR round presents it), keyed by its elicitationId. It returns the
// handler's own error unwrapped.
func (s *Session) presentURL(ctx context.Context, id string, el *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	params, err := json.Marshal(el)
	if err != nil {
		return nil, err
	}
	raw, err := s.serveThrough(ctx, id, protocol.MethodElicitationCreate, params, s.legacyCaps)
	if he, ok := errors.AsType[*handlerError](err); ok {
		return nil, he.err
	} else if err != nil {
		return nil, err
	}
	var res protocol.ElicitResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, err
	}
	return &res, nil
}
