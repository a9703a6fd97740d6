package client

import (
	"github.com/conduitmcp/conduit/handler"
)

// The user's handler is wrapped before it reaches the session, to validate
// form-mode elicitation answers (see validatingElicitor). handler.Detect
// takes, for each interface, the first value of the Unwrap chain
// implementing it, so the wrapper sits in front of the user's value only
// when it implements handler.Elicitor. The advertised capabilities
// therefore stay exactly those of the user's value, and its other
// interfaces (Sampler, RootsLister, the listeners, …) are still found at
// the end of the chain.

var _ handler.Elicitor = (*validatingElicitor)(nil)

// wrapHandler returns the wrapper chain in front of h (nil for nil).
func wrapHandler(h any) any {
	if h == nil {
		return nil
	}
	if set := handler.Detect(h); set.Elicitor != nil {
		return &validatingElicitor{inner: set.Elicitor, next: h}
	}
	return h
}
