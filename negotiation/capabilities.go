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
	// TaskRequests declares, in the legacy era, the 2025-11-25 client
	// tasks capability (list, cancel, and requests for what the handler
	// serves: sampling.createMessage with a Sampler, elicitation.create
	// with an Elicitor or URLElicitor), so the server may run those
	// requests as tasks on the client. Nothing is declared when the
	// handler serves neither.
	TaskRequests bool
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
	if opts.Era == EraLegacy && opts.TaskRequests {
		caps.Tasks = taskRequests(set)
	}
	return caps
}

// taskRequests is the 2025-11-25 client tasks capability for the requests
// set serves, or nil when it serves none that may run as a task.
func taskRequests(set handler.Set) *protocol.ClientTasksCapability {
	var req protocol.ClientTaskRequestsCapability
	if set.Sampler != nil {
		req.Sampling = &struct {
			CreateMessage *protocol.Empty `json:"createMessage,omitempty"`
		}{CreateMessage: &protocol.Empty{}}
	}
	if set.Elicitor != nil || set.URLElicitor != nil {
		req.Elicitation = &struct {
			Create *protocol.Empty `json:"create,omitempty"`
		}{Create: &protocol.Empty{}}
	}
	if req.Sampling == nil && req.Elicitation == nil {
		return nil
	}
	return &protocol.ClientTasksCapability{List: &protocol.Empty{}, Cancel: &protocol.Empty{}, Requests: &req}
}
