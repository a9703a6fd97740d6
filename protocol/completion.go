package protocol

// Reference types of [CompleteReference].
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompleteReference names what completion/complete completes: a prompt
// (Type "ref/prompt", Name, optional Title) or a resource template (Type
// "ref/resource", URI). All versions; Title is 2025-06-18 and later.
type CompleteReference struct {
	Type  string `json:"type"`
	Name  string `json:"name,omitempty"`
	Title string `json:"title,omitempty"`
	URI   string `json:"uri,omitempty"`
}

// PromptReference returns a reference to the prompt name.
func PromptReference(name string) CompleteReference {
	return CompleteReference{Type: RefPrompt, Name: name}
}

// ResourceTemplateReference returns a reference to the resource template
// uriTemplate.
func ResourceTemplateReference(uriTemplate string) CompleteReference {
	return CompleteReference{Type: RefResource, URI: uriTemplate}
}

// CompleteArgument is the argument being completed and its partial value.
type CompleteArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompleteContext carries already-resolved arguments (2025-06-18 and
// later).
type CompleteContext struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteParams are the params of completion/complete. All versions.
type CompleteParams struct {
	Ref      CompleteReference `json:"ref"`
	Argument CompleteArgument  `json:"argument"`
	Context  *CompleteContext  `json:"context,omitempty"`
	Meta     Meta              `json:"_meta,omitempty"`
}

// Completion is the completion of a [CompleteResult]: at most 100 values,
// the total number of options when known, and whether more exist. Total
// and HasMore are pointers so an explicit 0 or false survives a round
// trip.
type Completion struct {
	Values  []string `json:"values"`
	Total   *int64   `json:"total,omitempty"`
	HasMore *bool    `json:"hasMore,omitempty"`
}

// CompleteResult is the result of completion/complete. All versions;
// ResultType is 2026-07-28.
type CompleteResult struct {
	ResultType string     `json:"resultType,omitempty"`
	Completion Completion `json:"completion"`
	Meta       Meta       `json:"_meta,omitempty"`
}
