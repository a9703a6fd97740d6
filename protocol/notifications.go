package protocol

import "encoding/json"

// CancelledParams are the params of notifications/cancelled. All versions.
//
// RequestID names the request to cancel (or, from a 2026-07-28 server,
// the subscriptions/listen request being torn down): a string or an
// integer, kept raw so 1 and "1" stay apart; read it typed with
// [CancelledParams.ID]. It is required except in 2025-11-25, where it may
// be absent for task cancellation; nil leaves it out.
type CancelledParams struct {
	RequestID json.RawMessage `json:"requestId,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Meta      Meta            `json:"_meta,omitempty"`
}

// ID decodes RequestID. It returns the zero RequestID when the member is
// absent, and an error when it is neither a string nor an integer.
func (p CancelledParams) ID() (RequestID, error) {
	var id RequestID
	if len(p.RequestID) == 0 {
		return id, nil
	}
	err := json.Unmarshal(p.RequestID, &id)
	return id, err
}

// ProgressParams are the params of notifications/progress. All versions.
//
// ProgressToken is the token the request carried in _meta.progressToken
// (a string or an integer), kept raw so 1 and "1" stay apart; read it
// typed with [ProgressParams.Token], which is comparable and usable as a
// map key.
type ProgressParams struct {
	ProgressToken json.RawMessage `json:"progressToken"`
	// Progress increases with every notification; it may be fractional.
	Progress float64 `json:"progress"`
	// Total is the total amount of work, when known.
	Total *float64 `json:"total,omitempty"`
	// Message describes the current progress (2025-06-18 and later).
	Message string `json:"message,omitempty"`
	Meta    Meta   `json:"_meta,omitempty"`
}

// Token decodes ProgressToken. It returns the zero ProgressToken when the
// member is absent, and an error when it is neither a string nor an
// integer.
func (p ProgressParams) Token() (ProgressToken, error) {
	var t ProgressToken
	if len(p.ProgressToken) == 0 {
		return t, nil
	}
	err := json.Unmarshal(p.ProgressToken, &t)
	return t, err
}

// InitializedParams are the params of the legacy
// notifications/initialized.
type InitializedParams = NotificationParams

// RootsListChangedParams are the params of the legacy
// notifications/roots/list_changed (removed in 2026-07-28).
type RootsListChangedParams = NotificationParams

// ElicitationCompleteParams are the params of
// notifications/elicitation/complete (2025-11-25 only): the URL-mode
// elicitation with this id has finished.
type ElicitationCompleteParams struct {
	ElicitationID string `json:"elicitationId"`
	Meta          Meta   `json:"_meta,omitempty"`
}
