package client

import (
	"context"
	"sync/atomic"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// The user's handler is wrapped before it reaches the session, to validate
// elicitation answers and to notice when a request needed input (MRTR
// results that needed input are never cached; the wire tap also marks
// retries that carried only requestState, see tap.sent). handler.Detect takes, for
// each interface, the first value of the Unwrap chain implementing it, so
// the wrappers form a chain of single-interface hooks in front of the
// user's value: one hook per interface the user implements, none for the
// others. The advertised capabilities therefore stay exactly those of the
// user's value, and its listener interfaces are still found at the end of
// the chain.

type inputMarkKey struct{}

// withInputMark returns a context whose handler calls are recorded in the
// returned flag.
func withInputMark(ctx context.Context) (context.Context, *atomic.Bool) {
	b := new(atomic.Bool)
	return context.WithValue(ctx, inputMarkKey{}, b), b
}

// markInput records that a handler served input for the request of ctx.
func markInput(ctx context.Context) {
	if b, ok := ctx.Value(inputMarkKey{}).(*atomic.Bool); ok {
		b.Store(true)
	}
}

type samplerHook struct {
	inner handler.Sampler
	next  any
}

func (w *samplerHook) Unwrap() any { return w.next }

func (w *samplerHook) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	markInput(ctx)
	return w.inner.CreateMessage(ctx, p)
}

type urlElicitorHook struct {
	inner handler.URLElicitor
	next  any
}

func (w *urlElicitorHook) Unwrap() any { return w.next }

func (w *urlElicitorHook) ElicitURL(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	markInput(ctx)
	return w.inner.ElicitURL(ctx, p)
}

type rootsHook struct {
	inner handler.RootsLister
	next  any
}

func (w *rootsHook) Unwrap() any { return w.next }

func (w *rootsHook) ListRoots(ctx context.Context) ([]protocol.Root, error) {
	markInput(ctx)
	return w.inner.ListRoots(ctx)
}

var (
	_ handler.Sampler     = (*samplerHook)(nil)
	_ handler.Elicitor    = (*validatingElicitor)(nil)
	_ handler.URLElicitor = (*urlElicitorHook)(nil)
	_ handler.RootsLister = (*rootsHook)(nil)
)

// wrapHandler returns the hook chain in front of h (nil for nil).
func wrapHandler(h any) any {
	if h == nil {
		return nil
	}
	set := handler.Detect(h)
	cur := h
	if set.RootsLister != nil {
		cur = &rootsHook{inner: set.RootsLister, next: cur}
	}
	if set.URLElicitor != nil {
		cur = &urlElicitorHook{inner: set.URLElicitor, next: cur}
	}
	if set.Elicitor != nil {
		cur = &validatingElicitor{inner: set.Elicitor, next: cur}
	}
	if set.Sampler != nil {
		cur = &samplerHook{inner: set.Sampler, next: cur}
	}
	return cur
}
