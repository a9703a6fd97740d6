package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/conduitmcp/conduit/negotiation"
)

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
