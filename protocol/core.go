package protocol

import "encoding/json"

// Meta is a _meta object. Values stay raw so unknown keys survive a round
// trip untouched.
type Meta map[string]json.RawMessage

// Icon is an icon a server or a feature may show (2025-11-25 and later).
type Icon struct {
	Src      string   `json:"src"`
	MimeType string   `json:"mimeType,omitempty"`
	Sizes    []string `json:"sizes,omitempty"`
	Theme    string   `json:"theme,omitempty"`
}

// Implementation names a client or a server.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	// Title is a display name (2025-06-18 and later).
	Title string `json:"title,omitempty"`
	// Icons, Description and WebsiteURL are 2025-11-25 and later.
	Icons       []Icon `json:"icons,omitempty"`
	Description string `json:"description,omitempty"`
	WebsiteURL  string `json:"websiteUrl,omitempty"`
}

// Empty is an empty JSON object used as a capability flag ({}). A nil
// *Empty is "not declared".
type Empty struct{}

// ClientCapabilities is what a client declares: in initialize (legacy) or
// in every request's _meta (modern).
type ClientCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	Roots        *RootsCapability           `json:"roots,omitempty"`
	Sampling     *SamplingCapability        `json:"sampling,omitempty"`
	Elicitation  *ElicitationCapability     `json:"elicitation,omitempty"`
	// Tasks is the 2025-11-25 core tasks capability.
	Tasks *ClientTasksCapability `json:"tasks,omitempty"`
	// Extensions maps extension identifiers to their settings (2026-07-28).
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability declares roots support. ListChanged exists only in the
// legacy era.
type RootsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability declares sampling support.
type SamplingCapability struct {
	// Context allows includeContext other than "none" (deprecated).
	Context *Empty `json:"context,omitempty"`
	// Tools allows tools and toolChoice in sampling requests.
	Tools *Empty `json:"tools,omitempty"`
}

// ElicitationCapability declares elicitation support; an empty value means
// form mode only.
type ElicitationCapability struct {
	Form *Empty `json:"form,omitempty"`
	URL  *Empty `json:"url,omitempty"`
}

// ClientTasksCapability is the 2025-11-25 client tasks capability.
type ClientTasksCapability struct {
	List     *Empty                        `json:"list,omitempty"`
	Cancel   *Empty                        `json:"cancel,omitempty"`
	Requests *ClientTaskRequestsCapability `json:"requests,omitempty"`
}

// ClientTaskRequestsCapability lists the requests a client accepts as tasks
// (2025-11-25).
type ClientTaskRequestsCapability struct {
	Sampling *struct {
		CreateMessage *Empty `json:"createMessage,omitempty"`
	} `json:"sampling,omitempty"`
	Elicitation *struct {
		Create *Empty `json:"create,omitempty"`
	} `json:"elicitation,omitempty"`
}

// ServerCapabilities is what a server declares (initialize result or
// server/discover result).
type ServerCapabilities struct {
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Logging is deprecated in 2026-07-28.
	Logging     *Empty               `json:"logging,omitempty"`
	Completions *Empty               `json:"completions,omitempty"`
	Prompts     *PromptsCapability   `json:"prompts,omitempty"`
	Resources   *ResourcesCapability `json:"resources,omitempty"`
	Tools       *ToolsCapability     `json:"tools,omitempty"`
	// Tasks is the 2025-11-25 core tasks capability, kept raw.
	Tasks json.RawMessage `json:"tasks,omitempty"`
	// Extensions maps extension identifiers to settings (2026-07-28).
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PromptsCapability declares prompts support.
type PromptsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability declares resources support. In the modern era
// Subscribe means resourceSubscriptions on subscriptions/listen.
type ResourcesCapability struct {
	Subscribe   bool `json:"subscribe,omitempty"`
	ListChanged bool `json:"listChanged,omitempty"`
}

// ToolsCapability declares tools support.
type ToolsCapability struct {
	ListChanged bool `json:"listChanged,omitempty"`
}

// DiscoverResult is the wire shape of a server/discover result
// (2026-07-28). The negotiation package reads it with the lenient rules of
// the seeds; this type is the plain wire form.
type DiscoverResult struct {
	ResultType        string             `json:"resultType,omitempty"`
	SupportedVersions []string           `json:"supportedVersions"`
	Capabilities      ServerCapabilities `json:"capabilities"`
	Instructions      string             `json:"instructions,omitempty"`
	// TTLMs is read as the other cacheable results read it (see
	// [ListToolsResult.TTLMs]).
	TTLMs      *int64 `json:"ttlMs,omitempty"`
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [DiscoverResult.TTLMs].
func (r *DiscoverResult) UnmarshalJSON(data []byte) error {
	type plain DiscoverResult
	w := struct {
		*plain
		TTLMs json.RawMessage `json:"ttlMs"` // shadows plain's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	setHintMs(&r.TTLMs, w.TTLMs)
	return nil
}

// InitializeParams is the legacy initialize request's params.
type InitializeParams struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ClientCapabilities `json:"capabilities"`
	ClientInfo      Implementation     `json:"clientInfo"`
	Meta            Meta               `json:"_meta,omitempty"`
}

// InitializeResult is the legacy initialize result.
type InitializeResult struct {
	ProtocolVersion string             `json:"protocolVersion"`
	Capabilities    ServerCapabilities `json:"capabilities"`
	ServerInfo      Implementation     `json:"serverInfo"`
	Instructions    string             `json:"instructions,omitempty"`
	Meta            Meta               `json:"_meta,omitempty"`
}
