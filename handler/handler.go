package handler

import (
	"context"

	"github.com/conduitmcp/conduit/protocol"
)

// Sampler answers sampling/createMessage.
type Sampler interface {
	// CreateMessage samples the client's model. It may block; it may be
	// called concurrently.
	CreateMessage(ctx context.Context, params *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error)
}

// Elicitor answers form-mode elicitation/create.
type Elicitor interface {
	// Elicit asks the user to fill in params.RequestedSchema. It may block;
	// it may be called concurrently.
	Elicit(ctx context.Context, params *protocol.ElicitParams) (*protocol.ElicitResult, error)
}

// URLElicitor answers URL-mode elicitation/create: it shows params.URL to
// the user and returns "accept" once the user agreed to open it.
type URLElicitor interface {
	// ElicitURL may block; it may be called concurrently.
	ElicitURL(ctx context.Context, params *protocol.ElicitParams) (*protocol.ElicitResult, error)
}

// RootsLister answers roots/list.
type RootsLister interface {
	// ListRoots may block briefly; it may be called concurrently.
	ListRoots(ctx context.Context) ([]protocol.Root, error)
}

// LogListener receives notifications/message.
type LogListener interface {
	// OnLog is called from the dispatcher goroutine, in order.
	OnLog(ctx context.Context, params *protocol.LoggingMessageParams)
}

// ToolsChangedListener receives notifications/tools/list_changed.
type ToolsChangedListener interface {
	// OnToolsChanged is called from the dispatcher goroutine, in order.
	OnToolsChanged(ctx context.Context)
}

// PromptsChangedListener receives notifications/prompts/list_changed.
type PromptsChangedListener interface {
	// OnPromptsChanged is called from the dispatcher goroutine, in order.
	OnPromptsChanged(ctx context.Context)
}

// ResourcesChangedListener receives notifications/resources/list_changed.
type ResourcesChangedListener interface {
	// OnResourcesChanged is called from the dispatcher goroutine, in order.
	OnResourcesChanged(ctx context.Context)
}

// ResourceUpdatedListener receives notifications/resources/updated.
type ResourceUpdatedListener interface {
	// OnResourceUpdated is called from the dispatcher goroutine, in order.
	OnResourceUpdated(ctx context.Context, uri string)
}

// SamplerFunc adapts a function to [Sampler].
type SamplerFunc func(ctx context.Context, params *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error)

// CreateMessage calls f.
func (f SamplerFunc) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return f(ctx, p)
}

// ElicitorFunc adapts a function to [Elicitor].
type ElicitorFunc func(ctx context.Context, params *protocol.ElicitParams) (*protocol.ElicitResult, error)

// Elicit calls f.
func (f ElicitorFunc) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return f(ctx, p)
}

// URLElicitorFunc adapts a function to [URLElicitor].
type URLElicitorFunc func(ctx context.Context, params *protocol.ElicitParams) (*protocol.ElicitResult, error)

// ElicitURL calls f.
func (f URLElicitorFunc) ElicitURL(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return f(ctx, p)
}

// RootsListerFunc adapts a function to [RootsLister].
type RootsListerFunc func(ctx context.Context) ([]protocol.Root, error)

// ListRoots calls f.
func (f RootsListerFunc) ListRoots(ctx context.Context) ([]protocol.Root, error) { return f(ctx) }

// LogListenerFunc adapts a function to [LogListener].
type LogListenerFunc func(ctx context.Context, params *protocol.LoggingMessageParams)

// OnLog calls f.
func (f LogListenerFunc) OnLog(ctx context.Context, p *protocol.LoggingMessageParams) { f(ctx, p) }

// ToolsChangedListenerFunc adapts a function to [ToolsChangedListener].
type ToolsChangedListenerFunc func(ctx context.Context)

// OnToolsChanged calls f.
func (f ToolsChangedListenerFunc) OnToolsChanged(ctx context.Context) { f(ctx) }

// PromptsChangedListenerFunc adapts a function to [PromptsChangedListener].
type PromptsChangedListenerFunc func(ctx context.Context)

// OnPromptsChanged calls f.
func (f PromptsChangedListenerFunc) OnPromptsChanged(ctx context.Context) { f(ctx) }

// ResourcesChangedListenerFunc adapts a function to [ResourcesChangedListener].
type ResourcesChangedListenerFunc func(ctx context.Context)

// OnResourcesChanged calls f.
func (f ResourcesChangedListenerFunc) OnResourcesChanged(ctx context.Context) { f(ctx) }

// ResourceUpdatedListenerFunc adapts a function to [ResourceUpdatedListener].
type ResourceUpdatedListenerFunc func(ctx context.Context, uri string)

// OnResourceUpdated calls f.
func (f ResourceUpdatedListenerFunc) OnResourceUpdated(ctx context.Context, uri string) { f(ctx, uri) }

var (
	_ Sampler                  = SamplerFunc(nil)
	_ Elicitor                 = ElicitorFunc(nil)
	_ URLElicitor              = URLElicitorFunc(nil)
	_ RootsLister              = RootsListerFunc(nil)
	_ LogListener              = LogListenerFunc(nil)
	_ ToolsChangedListener     = ToolsChangedListenerFunc(nil)
	_ PromptsChangedListener   = PromptsChangedListenerFunc(nil)
	_ ResourcesChangedListener = ResourcesChangedListenerFunc(nil)
	_ ResourceUpdatedListener  = ResourceUpdatedListenerFunc(nil)
)

// Set is what [Detect] found on a handler value. A nil field means the
// handler does not implement that interface.
type Set struct {
	Sampler          Sampler
	Elicitor         Elicitor
	URLElicitor      URLElicitor
	RootsLister      RootsLister
	LogListener      LogListener
	ToolsChanged     ToolsChangedListener
	PromptsChanged   PromptsChangedListener
	ResourcesChanged ResourcesChangedListener
	ResourceUpdated  ResourceUpdatedListener
	ElicitationDone  ElicitationCompleteListener
	TaskStatus       TaskStatusListener
}

// maxUnwrap bounds the Unwrap chain so a cyclic chain cannot loop forever.
const maxUnwrap = 32

// Detect walks h and its Unwrap() any chain and records, for each
// recognized interface, the first value in the chain that implements it.
// A [Funcs] (or *Funcs) in the chain counts as implementing the interfaces
// whose fields are set. A nil h gives the zero Set.
func Detect(h any) Set { return detectChain(chain(h)) }

// chain returns h and the values of its Unwrap() any chain, each once.
func chain(h any) []any {
	var vs []any
	for i := 0; h != nil && i < maxUnwrap; i++ {
		vs = append(vs, h)
		u, ok := h.(interface{ Unwrap() any })
		if !ok {
			break
		}
		h = u.Unwrap()
	}
	return vs
}

// detectChain is Detect of the values of a chain.
func detectChain(vs []any) Set {
	var s Set
	for _, v := range vs {
		s.merge(detectOne(v))
	}
	return s
}

// detectOne records the interfaces h itself implements.
func detectOne(h any) Set {
	switch f := h.(type) {
	case Funcs:
		return f.set()
	case *Funcs:
		if f == nil {
			return Set{}
		}
		return f.set()
	}
	var s Set
	s.Sampler, _ = h.(Sampler)
	s.Elicitor, _ = h.(Elicitor)
	s.URLElicitor, _ = h.(URLElicitor)
	s.RootsLister, _ = h.(RootsLister)
	s.LogListener, _ = h.(LogListener)
	s.ToolsChanged, _ = h.(ToolsChangedListener)
	s.PromptsChanged, _ = h.(PromptsChangedListener)
	s.ResourcesChanged, _ = h.(ResourcesChangedListener)
	s.ResourceUpdated, _ = h.(ResourceUpdatedListener)
	s.ElicitationDone, _ = h.(ElicitationCompleteListener)
	s.TaskStatus, _ = h.(TaskStatusListener)
	return s
}
