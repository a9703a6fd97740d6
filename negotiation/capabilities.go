package negotiation

import (
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/protocol"
)

// CapabilityOptions tune [ClientCapabilities].
type CapabilityOptions struct {
	// Era is the era the capabilities are for; the zero value means
	// EraModern.
	Era Era
	// SamplingTools also declares sampling.tools (with a Sampler).
	SamplingTools bool
	// SamplingContext also declares sampling.context, allowing
	// includeContext other than "none" (with a Sampler).
	SamplingContext bool
	// RootsListChanged declares roots.listChanged in the legacy era,
	// promising notifications/roots/list_changed (with a RootsLister).
	RootsListChanged bool
}

// ClientCapabilities returns the capabilities to advertise for the handler
// h, built only from the interfaces h implements (found by [handler.Detect],
// which follows Unwrap chains):
//
//   - [handler.Sampler]: sampling, plus tools and context per opts
//   - [handler.Elicitor]: elicitation.form
//   - [handler.URLElicitor]: elicitation.url
//   - [handler.RootsLister]: roots, plus listChanged in the legacy era
//     when opts.RootsListChanged
//
// A nil h, or one implementing none of them, gives the empty capabilities
// ({}).
func ClientCapabilities(h any, opts CapabilityOptions) protocol.ClientCapabilities {
	return CapabilitiesOf(handler.Detect(h), opts)
}

// CapabilitiesOf is [ClientCapabilities] for a handler already detected
// (a client detects its handler once and passes the set down).
func CapabilitiesOf(set handler.Set, opts CapabilityOptions) protocol.ClientCapabilities {
	var caps protocol.ClientCapabilities
	if set.Sampler != nil {
		caps.Sampling = &protocol.SamplingCapability{}
		if opts.SamplingTools {
			caps.Sampling.Tools = &protocol.Empty{}
		}
		if opts.SamplingContext {
			caps.Sampling.Context = &protocol.Empty{}
		}
	}
	if set.Elicitor != nil || set.URLElicitor != nil {
		caps.Elicitation = &protocol.ElicitationCapability{}
		if set.Elicitor != nil {
			caps.Elicitation.Form = &protocol.Empty{}
		}
		if set.URLElicitor != nil {
			caps.Elicitation.URL = &protocol.Empty{}
		}
	}
	if set.RootsLister != nil {
		caps.Roots = &protocol.RootsCapability{}
		if opts.Era == EraLegacy && opts.RootsListChanged {
			caps.Roots.ListChanged = true
		}
	}
	return caps
}
