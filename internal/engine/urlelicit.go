package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// MaxURLElicitationWait bounds how long a call that met -32042 waits for
// the servers' notifications/elicitation/complete once the URLElicitor
// accepted every URL, before it gives up and returns the
// [*URLElicitationRequiredError].
const MaxURLElicitationWait = 5 * time.Minute

// maxURLElicitations bounds the elicitations one -32042 error may carry.
const maxURLElicitations = 16

// URLElicitationRequiredError is a 2025-11-25 server's
// URLElicitationRequiredError (-32042): the request needs the user to
// visit the URLs of Elicitations first. Err is the server's error.
type URLElicitationRequiredError struct {
	Method       string
	Elicitations []protocol.ElicitParams
	Err          *jsonrpc.Error
}

func (e *URLElicitationRequiredError) Error() string {
	return fmt.Sprintf("session: %s needs %d URL elicitation(s): %s", e.Method, len(e.Elicitations), e.Err.Message)
}

func (e *URLElicitationRequiredError) Unwrap() error { return e.Err }

// maxRecentCompletions bounds the completed elicitation ids remembered
// for a call that registers its wait after the notification came.
const maxRecentCompletions = 64

// urlWaits are the elicitation ids calls wait to see completed, and the
// ids seen completed lately (a notification may overtake the error).
type urlWaits struct {
	mu     sync.Mutex
	m      map[string]chan struct{}
	recent []string
}

// wait registers id and returns the channel closed when it completes.
func (w *urlWaits) wait(id string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = map[string]chan struct{}{}
	}
	ch, ok := w.m[id]
	if !ok {
		ch = make(chan struct{})
		if slices.Contains(w.recent, id) {
			close(ch)
			return ch
		}
		w.m[id] = ch
	}
	return ch
}

// done closes the channel of id; unknown ids are ignored.
func (w *urlWaits) done(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ch, ok := w.m[id]; ok {
		close(ch)
		delete(w.m, id)
		return
	}
	if len(w.recent) == maxRecentCompletions {
		w.recent = slices.Delete(w.recent, 0, 1)
	}
	w.recent = append(w.recent, id)
}

// forget drops ids nobody waits for any more.
func (w *urlWaits) forget(ids []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, id := range ids {
		delete(w.m, id)
	}
}

// urlElicitationError reads a -32042 error answering method.
func urlElicitationError(method string, e *jsonrpc.Error) error {
	var data struct {
		Elicitations []protocol.ElicitParams `json:"elicitations"`
	}
	if json.Unmarshal(e.Data, &data) != nil || len(data.Elicitations) == 0 || len(data.Elicitations) > maxURLElicitations {
		return &ProtocolError{Method: method, Reason: "malformed URLElicitationRequiredError data", Err: errors.Join(ErrInvalidResponse, e)}
	}
	for _, el := range data.Elicitations {
		if el.Mode != protocol.ElicitModeURL || el.URL == "" || el.ElicitationID == "" {
			return &ProtocolError{Method: method, Reason: "URLElicitationRequiredError lists an elicitation that is not a URL elicitation with an id", Err: errors.Join(ErrInvalidResponse, e)}
		}
	}
	return &URLElicitationRequiredError{Method: method, Elicitations: data.Elicitations, Err: e}
}

// urlElicit handles a legacy -32042 answer: with a URLElicitor declared,
// it presents every URL, waits (bounded by ctx and MaxURLElicitationWait)
// for each elicitation to complete, and returns nil: the request may be
// sent again. Otherwise, or when the user did not accept, it returns the
// typed error.
func (s *Session) urlElicit(ctx context.Context, method string, e *jsonrpc.Error) error {
	err := urlElicitationError(method, e)
	ue, ok := errors.AsType[*URLElicitationRequiredError](err)
	if !ok || s.set.URLElicitor == nil || s.legacyCaps.Elicitation == nil || s.legacyCaps.Elicitation.URL == nil {
		return err
	}
	ids := make([]string, len(ue.Elicitations))
	chans := make([]chan struct{}, len(ue.Elicitations))
	for i, el := range ue.Elicitations {
		ids[i], chans[i] = el.ElicitationID, s.urls.wait(el.ElicitationID)
	}
	defer s.urls.forget(ids)
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
		case <-s.closing:
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
	if l := s.set.ElicitationDone; l != nil {
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
	raw, err := s.serveThrough(ctx, jsonrpc.StringID(id), protocol.MethodElicitationCreate, params, s.legacyCaps)
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
