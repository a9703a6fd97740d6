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
