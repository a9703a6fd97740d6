package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

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
		if caps.Sampling == nil || s.set.Sampler == nil {
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
			if !formDeclared(caps.Elicitation) || s.set.Elicitor == nil {
				return "form-mode elicitation was not declared"
			}
		case protocol.ElicitModeURL:
			if caps.Elicitation == nil || caps.Elicitation.URL == nil || s.set.URLElicitor == nil {
				return "URL-mode elicitation was not declared"
			}
		default:
			return "unknown elicitation mode " + strconv.Quote(p.Mode)
		}
	case protocol.MethodRootsList:
		if caps.Roots == nil || s.set.RootsLister == nil {
			return "roots were not declared"
		}
	default:
		return "unknown method " + strconv.Quote(r.Method)
	}
	return ""
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
	stop := context.AfterFunc(s.lifeCtx, cancel)
	defer stop()
	g, gctx := errgroup.WithContext(hctx)
	for i, k := range keys {
		r := reqs[k]
		g.Go(func() error {
			raw, err := s.serveThrough(gctx, jsonrpc.StringID(k), r.Method, r.Params, s.modernCaps)
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
		if s.lifeCtx.Err() != nil {
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
var ErrInvalidResume = errors.New("session: invalid state to resume")

// Live reports a legacy call's held requests: they can be answered only
// by Resume on the same session, with this very value (a copy decoded
// from JSON is not live).
func (e *InputRequiredError) Live() bool { return e.live != nil }

func (e *InputRequiredError) Error() string {
	return fmt.Sprintf("session: %s needs input (%d request(s), round %d)", e.Method, len(e.Requests), e.Round)
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
