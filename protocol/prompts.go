package protocol

import "encoding/json"

// Prompt describes a prompt template the server offers. All versions;
// Title is 2025-06-18 and later, Icons 2025-11-25 and later.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
}

// PromptArgument is one argument a prompt accepts. All versions; Title is
// 2025-06-18 and later.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// ListPromptsResult is the result of prompts/list. All versions;
// ResultType, TTLMs and CacheScope are 2026-07-28 (cacheable result).
// NextCursor is nil on the last page.
type ListPromptsResult struct {
	ResultType string   `json:"resultType,omitempty"`
	Prompts    []Prompt `json:"prompts"`
	NextCursor *string  `json:"nextCursor,omitempty"`
	// TTLMs is the freshness hint in milliseconds; nil and negative mean 0.
	// Decoding reads it as a hint, never failing the result: a whole
	// number spelled as a float (300000.0, 3e5) reads as that number, one
	// past int64 as its bound, a fraction or a value that is no number
	// as nil.
	TTLMs *int64 `json:"ttlMs,omitempty"`
	// CacheScope is "public" or "private"; anything else means private.
	CacheScope string `json:"cacheScope,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// MarshalJSON encodes r, writing "prompts": [] when Prompts is nil.
func (r ListPromptsResult) MarshalJSON() ([]byte, error) {
	type plain ListPromptsResult
	if r.Prompts == nil {
		r.Prompts = []Prompt{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes r as encoding/json decodes its fields, except that
// ttlMs is read as a hint: see [ListPromptsResult.TTLMs].
func (r *ListPromptsResult) UnmarshalJSON(data []byte) error {
	type plain ListPromptsResult
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

// GetPromptParams are the params of prompts/get. All versions;
// InputResponses and RequestState are the 2026-07-28 MRTR retry members
// (see [CallToolParams] for their rules).
type GetPromptParams struct {
	Name           string            `json:"name"`
	Arguments      map[string]string `json:"arguments,omitempty"`
	InputResponses InputResponses    `json:"inputResponses,omitempty"`
	RequestState   *string           `json:"requestState,omitempty"`
	Meta           Meta              `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt: a role and one content block.
// All versions.
type PromptMessage struct {
	Role    Role    `json:"role"`
	Content Content `json:"content"`
}

// GetPromptResult is the complete result of prompts/get. All versions;
// ResultType is 2026-07-28.
type GetPromptResult struct {
	ResultType  string          `json:"resultType,omitempty"`
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        Meta            `json:"_meta,omitempty"`
}

// MarshalJSON encodes r, writing "messages": [] when Messages is nil.
func (r GetPromptResult) MarshalJSON() ([]byte, error) {
	type plain GetPromptResult
	if r.Messages == nil {
		r.Messages = []PromptMessage{}
	}
	return json.Marshal(plain(r))
}

// Text returns the text of the result's text blocks, joined by newlines.
func (r GetPromptResult) Text() string {
	cs := make([]Content, len(r.Messages))
	for i, m := range r.Messages {
		cs[i] = m.Content
	}
	return joinText(cs)
}
