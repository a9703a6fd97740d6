package protocol

import "encoding/json"

// The requests a server makes of a client: server-to-client requests in the
// legacy era, MRTR input requests in the modern era. The same types serve
// both.

// Role is "user" or "assistant".
type Role string

// Roles.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
)

// SamplingMessage is one message of a sampling conversation. All versions.
// Content is a single block or (2025-11-25 and later) an array of blocks;
// it is kept raw (json.RawMessage, so m.Content.Text does not compile) and
// read with [SamplingMessage.Blocks], or [SamplingMessage.Text] for its
// text; see the example.
type SamplingMessage struct {
	Role    Role            `json:"role"`
	Content json.RawMessage `json:"content"`
	Meta    Meta            `json:"_meta,omitempty"`
}

// Blocks decodes the message content as a list of blocks, whether it was
// sent as one block or as an array.
func (m SamplingMessage) Blocks() ([]Content, error) { return decodeBlocks(m.Content) }

// Text returns the text of the message's text blocks (joined by newlines
// when there are several), "" when it has none or its content cannot be
// read: what a sampling handler usually passes to its model.
func (m SamplingMessage) Text() string {
	bs, _ := m.Blocks() // unreadable content: no text
	return joinText(bs)
}

func decodeBlocks(raw json.RawMessage) ([]Content, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	for _, c := range raw {
		if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
			continue
		}
		if c == '[' {
			var bs []Content
			err := json.Unmarshal(raw, &bs)
			return bs, err
		}
		break
	}
	var b Content
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, err
	}
	return []Content{b}, nil
}

// ModelHint names a model (family) to prefer. All versions.
type ModelHint struct {
	Name string `json:"name,omitempty"`
}

// ModelPreferences guide the client's model choice. All versions.
type ModelPreferences struct {
	Hints                []ModelHint `json:"hints,omitempty"`
	CostPriority         *float64    `json:"costPriority,omitempty"`
	SpeedPriority        *float64    `json:"speedPriority,omitempty"`
	IntelligencePriority *float64    `json:"intelligencePriority,omitempty"`
}

// ToolChoice constrains tool use in sampling (2025-11-25 and later).
type ToolChoice struct {
	Mode string `json:"mode,omitempty"`
}

// CreateMessageParams are the params of sampling/createMessage: a
// server-to-client request in the legacy era, an embedded MRTR input
// request in 2026-07-28 (deprecated feature there).
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	MaxTokens        int64             `json:"maxTokens"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	Metadata         json.RawMessage   `json:"metadata,omitempty"`
	// Tools and ToolChoice are 2025-11-25 and later; they need the
	// sampling.tools capability.
	Tools      []Tool      `json:"tools,omitempty"`
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	// Task is the 2025-11-25 task augmentation, kept raw.
	Task json.RawMessage `json:"task,omitempty"`
	Meta Meta            `json:"_meta,omitempty"`
}

// CreateMessageResult is the answer to sampling/createMessage (all
// versions; in 2026-07-28 an [InputResponses] value, without resultType).
// Content is a single block or an array of blocks (2025-11-25 and later).
type CreateMessageResult struct {
	Role       Role            `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
	Meta       Meta            `json:"_meta,omitempty"`
}

// Blocks decodes Content as a list of blocks.
func (r CreateMessageResult) Blocks() ([]Content, error) { return decodeBlocks(r.Content) }

// Elicitation modes.
const (
	ElicitModeForm = "form"
	ElicitModeURL  = "url"
)

// ElicitParams are the params of elicitation/create, form or URL mode
// (2025-06-18 and later; a server-to-client request in the legacy era, an
// embedded MRTR input request in 2026-07-28). Parse RequestedSchema with
// [ParseRequestedSchema].
type ElicitParams struct {
	// Mode is "form" (the default when empty) or "url" (2025-11-25 and
	// later).
	Mode    string `json:"mode,omitempty"`
	Message string `json:"message"`
	// RequestedSchema is the form's schema (form mode), kept raw:
	// {type:"object", properties:{…}, required:[…]}.
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	// URL and ElicitationID are URL mode; ElicitationID exists only in
	// 2025-11-25.
	URL           string          `json:"url,omitempty"`
	ElicitationID string          `json:"elicitationId,omitempty"`
	Task          json.RawMessage `json:"task,omitempty"`
	Meta          Meta            `json:"_meta,omitempty"`
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

// ElicitResult is the answer to elicitation/create (2025-06-18 and later;
// in 2026-07-28 an [InputResponses] value). Content is present only
// for "accept" in form mode; values are strings, numbers, booleans or
// (2025-11-25 and later) string arrays.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
	Meta    Meta           `json:"_meta,omitempty"`
}

// Root is a root the client exposes (a file:// URI). All versions.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
	Meta Meta   `json:"_meta,omitempty"`
}

// ListRootsParams are the params of roots/list (legacy server-to-client
// request; embedded MRTR input request in 2026-07-28).
type ListRootsParams struct {
	Meta Meta `json:"_meta,omitempty"`
}

// ListRootsResult is the answer to roots/list. All versions; in 2026-07-28
// an [InputResponses] value.
type ListRootsResult struct {
	Roots []Root `json:"roots"`
	Meta  Meta   `json:"_meta,omitempty"`
}

// Stop reasons of [CreateMessageResult.StopReason]; other strings are
// allowed.
const (
	StopReasonEndTurn      = "endTurn"
	StopReasonStopSequence = "stopSequence"
	StopReasonMaxTokens    = "maxTokens"
	// StopReasonToolUse is 2025-11-25 and later.
	StopReasonToolUse = "toolUse"
)

// Tool choice modes of [ToolChoice.Mode] (2025-11-25 and later); "" means
// "auto".
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceRequired = "required"
	ToolChoiceNone     = "none"
)

// Values of [CreateMessageParams.IncludeContext]. ThisServer and
// AllServers are deprecated in 2026-07-28 and need the sampling.context
// capability.
const (
	IncludeContextNone       = "none"
	IncludeContextThisServer = "thisServer"
	IncludeContextAllServers = "allServers"
)
