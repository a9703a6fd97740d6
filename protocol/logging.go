package protocol

import "encoding/json"

// LoggingLevel is a syslog severity, lowest first: debug, info, notice,
// warning, error, critical, alert, emergency.
type LoggingLevel string

// Logging levels.
const (
	LevelDebug     LoggingLevel = "debug"
	LevelInfo      LoggingLevel = "info"
	LevelNotice    LoggingLevel = "notice"
	LevelWarning   LoggingLevel = "warning"
	LevelError     LoggingLevel = "error"
	LevelCritical  LoggingLevel = "critical"
	LevelAlert     LoggingLevel = "alert"
	LevelEmergency LoggingLevel = "emergency"
)

// SetLevelParams are the params of the legacy logging/setLevel (removed in
// 2026-07-28, where _meta io.modelcontextprotocol/logLevel replaces it).
// The result is an [EmptyResult].
type SetLevelParams struct {
	Level LoggingLevel `json:"level"`
	Meta  Meta         `json:"_meta,omitempty"`
}

// LoggingMessageParams are the params of notifications/message. All
// versions (deprecated in 2026-07-28).
type LoggingMessageParams struct {
	Level  LoggingLevel    `json:"level"`
	Logger string          `json:"logger,omitempty"`
	Data   json.RawMessage `json:"data"`
	Meta   Meta            `json:"_meta,omitempty"`
}

// ResourceUpdatedParams are the params of notifications/resources/updated.
// All versions; in 2026-07-28 delivered on subscriptions/listen.
type ResourceUpdatedParams struct {
	URI  string `json:"uri"`
	Meta Meta   `json:"_meta,omitempty"`
}
