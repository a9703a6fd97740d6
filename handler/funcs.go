package handler

// Funcs is a handler built from functions, checked by the compiler: a
// misspelt field or a wrong signature does not compile. Set the fields
// for the requests and notifications to serve and pass the value (or a
// pointer to it) to client.WithHandler:
//
//	h := handler.Funcs{
//		CreateMessage: func(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
//			return protocol.TextMessageResult("my-model", "hello"), nil
//		},
//		OnToolsChanged: func(ctx context.Context) { … },
//	}
//
// [Detect] treats a Funcs as implementing exactly the interfaces whose
// fields are set, so those alone decide the advertised capabilities: a
// Funcs with only CreateMessage advertises sampling and nothing else.
type Funcs struct {
	CreateMessage      SamplerFunc                  // Sampler: sampling/createMessage
	Elicit             ElicitorFunc                 // Elicitor: form-mode elicitation/create
	ElicitURL          URLElicitorFunc              // URLElicitor: URL-mode elicitation/create
	ListRoots          RootsListerFunc              // RootsLister: roots/list
	OnLog              LogListenerFunc              // LogListener: notifications/message
	OnToolsChanged     ToolsChangedListenerFunc     // ToolsChangedListener
	OnPromptsChanged   PromptsChangedListenerFunc   // PromptsChangedListener
	OnResourcesChanged ResourcesChangedListenerFunc // ResourcesChangedListener
	OnResourceUpdated  ResourceUpdatedListenerFunc  // ResourceUpdatedListener

	OnElicitationComplete ElicitationCompleteListenerFunc // ElicitationCompleteListener
	OnTaskStatus          TaskStatusListenerFunc          // TaskStatusListener
}

// set returns the interfaces of the fields that are set.
func (f *Funcs) set() Set {
	var s Set
	if f.CreateMessage != nil {
		s.Sampler = f.CreateMessage
	}
	if f.Elicit != nil {
		s.Elicitor = f.Elicit
	}
	if f.ElicitURL != nil {
		s.URLElicitor = f.ElicitURL
	}
	if f.ListRoots != nil {
		s.RootsLister = f.ListRoots
	}
	if f.OnLog != nil {
		s.LogListener = f.OnLog
	}
	if f.OnToolsChanged != nil {
		s.ToolsChanged = f.OnToolsChanged
	}
	if f.OnPromptsChanged != nil {
		s.PromptsChanged = f.OnPromptsChanged
	}
	if f.OnResourcesChanged != nil {
		s.ResourcesChanged = f.OnResourcesChanged
	}
	if f.OnResourceUpdated != nil {
		s.ResourceUpdated = f.OnResourceUpdated
	}
	if f.OnElicitationComplete != nil {
		s.ElicitationDone = f.OnElicitationComplete
	}
	if f.OnTaskStatus != nil {
		s.TaskStatus = f.OnTaskStatus
	}
	return s
}

// merge fills the nil fields of s from o.
func (s *Set) merge(o Set) {
	fill(&s.Sampler, o.Sampler)
	fill(&s.Elicitor, o.Elicitor)
	fill(&s.URLElicitor, o.URLElicitor)
	fill(&s.RootsLister, o.RootsLister)
	fill(&s.LogListener, o.LogListener)
	fill(&s.ToolsChanged, o.ToolsChanged)
	fill(&s.PromptsChanged, o.PromptsChanged)
	fill(&s.ResourcesChanged, o.ResourcesChanged)
	fill(&s.ResourceUpdated, o.ResourceUpdated)
	fill(&s.ElicitationDone, o.ElicitationDone)
	fill(&s.TaskStatus, o.TaskStatus)
}

// fill sets *dst to v unless *dst is already set. T is an interface type,
// so the comparison with its nil zero value never panics.
func fill[T comparable](dst *T, v T) {
	var zero T
	if *dst == zero {
		*dst = v
	}
}

// empty reports whether s holds no interface.
func (s *Set) empty() bool { return *s == Set{} }
