package protocol

import "encoding/json"

// Builders of the results a client handler returns, so that a handler
// need not marshal content blocks by hand.

// TextMessageResult returns a sampling/createMessage result: the
// assistant's text, produced by model, with stop reason "endTurn".
func TextMessageResult(model, text string) *CreateMessageResult {
	// A text block always encodes.
	b, _ := json.Marshal(TextContent(text))
	return &CreateMessageResult{Role: RoleAssistant, Content: b, Model: model, StopReason: StopReasonEndTurn}
}

// AcceptElicitation returns an elicitation/create result accepting the
// request with content (the form's values; nil for URL mode).
func AcceptElicitation(content map[string]any) *ElicitResult {
	return &ElicitResult{Action: ElicitAccept, Content: content}
}

// DeclineElicitation returns an elicitation/create result saying the
// user declined the request.
func DeclineElicitation() *ElicitResult { return &ElicitResult{Action: ElicitDecline} }

// CancelElicitation returns an elicitation/create result saying the user
// dismissed the request without choosing.
func CancelElicitation() *ElicitResult { return &ElicitResult{Action: ElicitCancel} }
