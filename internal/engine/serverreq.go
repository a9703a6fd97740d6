package engine

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/conduitmcp/conduit/internal/route"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// serverRequest starts answering a legacy server-to-client request that
// arrived on ref (on request on's response stream, when valid). It runs
// on the loop; the handler runs on its own tracked goroutine with a
// context cancelled by the server's notifications/cancelled or by Close.
func (s *Session) serverRequest(ref *connRef, req *jsonrpc.Request, on jsonrpc.ID) {
	lp := &s.lp
	if lp.st == StateModern {
		// Modern servers never send requests (MRTR replaced them).
		s.log.Warn("dropping a request from a modern server", "method", req.Method, "id", req.ID)
		s.drop(req.Method, 1)
		return
	}
	k := served{ref, req.ID}
	if _, dup := lp.serving[k]; dup {
		s.log.Warn("dropping a server request with a duplicate id", "method", req.Method, "id", req.ID)
		s.drop(req.Method, 1)
		return
	}
	if len(lp.serving) >= MaxConcurrentServerRequests {
		// Never silence: the overflow gets an error (overload.go).
		s.log.Debug("too many concurrent server requests; refusing one", "method", req.Method, "id", req.ID, "limit", MaxConcurrentServerRequests)
		s.reject(ref, req)
		return
	}
	ctx, cancel := context.WithCancel(s.dctx.Context)
	if lp.serving == nil {
		lp.serving = make(map[served]context.CancelFunc)
	}
	lp.serving[k] = cancel
	s.wg.Add(1)
	go s.serveRequest(ctx, ref, req, s.tieOf(ref, on))
}

// served names a legacy server request in flight: its id is the server's
// on the connection it came on (a respawned process numbers its requests
// from 1 again while the handlers of the old one's may still run).
type served struct {
	ref *connRef
	id  jsonrpc.ID
}

// serveRequest answers one server request, tied to the call t (nil:
// none, see tie.go). A request the server cancelled gets no answer. The
// answer to a failed handler is the handler's *jsonrpc.Error, else
// -32603 with the handler's message; the failure is first remembered on
// the tied call.
func (s *Session) serveRequest(ctx context.Context, ref *connRef, req *jsonrpc.Request, t *tie) {
	defer s.wg.Done()
	defer s.post(event{kind: evServed, ref: ref, id: req.ID})
	result, err := s.serveLegacy(ctx, req)
	if ctx.Err() != nil {
		return
	}
	resp := &jsonrpc.Response{ID: req.ID, Result: result}
	if err != nil {
		if he, ok := errors.AsType[*handlerError](err); ok {
			s.pending.handlerFailed(t, req.Method, he.err)
		}
		je, ok := errors.AsType[*jsonrpc.Error](err)
		if !ok {
			je = jsonrpc.ErrInternal.WithMessage(err.Error())
		}
		resp = jsonrpc.NewErrorResponse(req.ID, je)
	}
	wctx, cancel := context.WithTimeout(s.dctx.Context, responseWriteTimeout)
	defer cancel()
	if err := s.write(wctx, ref, resp); err != nil {
		s.log.Debug("answering a server request", "method", req.Method, "id", req.ID, "err", err)
	}
}

// handlerError marks an error returned by user handler code, as opposed
// to a *jsonrpc.Error the session produced for a request it cannot serve.
type handlerError struct{ err error }

func (e *handlerError) Error() string { return e.err.Error() }
func (e *handlerError) Unwrap() error { return e.err }

// invoke serves one server request (legacy) or MRTR input request (modern)
// through the handler interfaces. caps are the capabilities declared in
// that era. It returns the raw result, a *jsonrpc.Error when the request
// cannot be served (unknown method, bad params, undeclared ability), or a
// *handlerError wrapping the handler's own error.
func (s *Session) invoke(ctx context.Context, method string, params json.RawMessage, caps protocol.ClientCapabilities) (json.RawMessage, error) {
	h := s.cfg.Handler
	switch route.Incoming(method) {
	case route.ServePing:
		return json.RawMessage("{}"), nil
	case route.ServeSampling:
		if h.Sampler == nil || caps.Sampling == nil {
			return nil, jsonrpc.ErrMethodNotFound.WithMessage("sampling is not supported")
		}
		var p protocol.CreateMessageParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid sampling/createMessage params: " + err.Error())
		}
		if (len(p.Tools) > 0 || p.ToolChoice != nil) && caps.Sampling.Tools == nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("sampling with tools needs the sampling.tools capability")
		}
		res, err := h.Sampler.CreateMessage(ctx, &p)
		if err != nil {
			return nil, &handlerError{err}
		}
		return marshalResult(res)
	case route.ServeElicitation:
		if err := s.lacksElicitation(); err != nil {
			return nil, err
		}
		if (h.Elicitor == nil && h.URLElicitor == nil) || caps.Elicitation == nil {
			return nil, jsonrpc.ErrMethodNotFound.WithMessage("elicitation is not supported")
		}
		var p protocol.ElicitParams
		if err := unmarshalParams(params, &p); err != nil {
			return nil, jsonrpc.ErrInvalidParams.WithMessage("invalid elicitation/create params: " + err.Error())
		}
		var (
			res *protocol.ElicitResult
			err error
		)
		switch p.Mode {
		case "", protocol.ElicitModeForm:
			if h.Elicitor == nil || !formDeclared(caps.Elicitation) {
				return nil, jsonrpc.ErrInvalidParams.WithMessage("form-mode elicitation is not supported")
			}
			res, err = h.Elicitor.Elicit(ctx, &p)
		case protocol.ElicitModeURL:
			if h.URLElicitor == nil || caps.Elicitation.URL == nil {
				return nil, jsonrpc.ErrInvalidParams.WithMessage("URL-mode elicitation is not supported")
			}
			res, err = h.URLElicitor.ElicitURL(ctx, &p)
		default:
			return nil, jsonrpc.ErrInvalidParams.WithMessage("unknown elicitation mode " + p.Mode)
		}
		if err != nil {
			return nil, &handlerError{err}
		}
		return marshalResult(res)
	case route.ServeRoots:
		if h.RootsLister == nil || caps.Roots == nil {
			return nil, jsonrpc.ErrMethodNotFound.WithMessage("roots are not supported")
		}
		roots, err := h.RootsLister.ListRoots(ctx)
		if err != nil {
			return nil, &handlerError{err}
		}
		if roots == nil {
			roots = []protocol.Root{}
		}
		return marshalResult(&protocol.ListRootsResult{Roots: roots})
	}
	return nil, jsonrpc.ErrMethodNotFound.WithMessage("method not found: " + method)
}

// formDeclared reports whether an elicitation capability includes form
// mode ({} means form only).
func formDeclared(e *protocol.ElicitationCapability) bool {
	return e != nil && (e.Form != nil || e.URL == nil)
}

func unmarshalParams(params json.RawMessage, v any) error {
	if len(params) == 0 {
		return nil
	}
	return json.Unmarshal(params, v)
}

func marshalResult(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &handlerError{err}
	}
	if string(b) == "null" {
		return nil, &handlerError{errors.New("handler returned no result")}
	}
	return b, nil
}
