package protocol

// Protocol versions the SDK speaks.
const (
	// Version20260728 is the modern era's first version.
	Version20260728 = "2026-07-28"
	// Version20251125 is the newest legacy version.
	Version20251125 = "2025-11-25"
	// Version20250618 is the oldest legacy version the SDK speaks.
	Version20250618 = "2025-06-18"
	// Version20250326 is what legacy HTTP servers assume when the
	// MCP-Protocol-Version header is missing. The SDK does not speak it.
	Version20250326 = "2025-03-26"
	// Version20241105 is the version of the deprecated HTTP+SSE transport.
	Version20241105 = "2024-11-05"

	// LatestVersion is the newest version the SDK speaks.
	LatestVersion = Version20260728
	// LatestLegacyVersion is the version sent in initialize.
	LatestLegacyVersion = Version20251125
)

// Method names, client→server.
const (
	MethodInitialize            = "initialize"
	MethodPing                  = "ping"
	MethodDiscover              = "server/discover"
	MethodToolsList             = "tools/list"
	MethodToolsCall             = "tools/call"
	MethodPromptsList           = "prompts/list"
	MethodPromptsGet            = "prompts/get"
	MethodResourcesList         = "resources/list"
	MethodResourcesTemplateList = "resources/templates/list"
	MethodResourcesRead         = "resources/read"
	MethodResourcesSubscribe    = "resources/subscribe"
	MethodResourcesUnsubscribe  = "resources/unsubscribe"
	MethodSubscriptionsListen   = "subscriptions/listen"
	MethodCompletionComplete    = "completion/complete"
	MethodLoggingSetLevel       = "logging/setLevel"
	MethodTasksGet              = "tasks/get"
	MethodTasksResult           = "tasks/result"
	MethodTasksList             = "tasks/list"
	MethodTasksCancel           = "tasks/cancel"
	MethodTasksUpdate           = "tasks/update"
)

// Method names, server→client (legacy requests; modern MRTR input requests).
const (
	MethodSamplingCreateMessage = "sampling/createMessage"
	MethodElicitationCreate     = "elicitation/create"
	MethodRootsList             = "roots/list"
)

// Notification names.
const (
	NotificationInitialized               = "notifications/initialized"
	NotificationCancelled                 = "notifications/cancelled"
	NotificationProgress                  = "notifications/progress"
	NotificationMessage                   = "notifications/message"
	NotificationToolsListChanged          = "notifications/tools/list_changed"
	NotificationPromptsListChanged        = "notifications/prompts/list_changed"
	NotificationResourcesListChanged      = "notifications/resources/list_changed"
	NotificationResourcesUpdated          = "notifications/resources/updated"
	NotificationRootsListChanged          = "notifications/roots/list_changed"
	NotificationElicitationComplete       = "notifications/elicitation/complete"
	NotificationTasksStatus               = "notifications/tasks/status"
	NotificationTasks                     = "notifications/tasks"
	NotificationSubscriptionsAcknowledged = "notifications/subscriptions/acknowledged"
)

// _meta keys.
const (
	MetaProtocolVersion        = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities     = "io.modelcontextprotocol/clientCapabilities"
	MetaClientInfo             = "io.modelcontextprotocol/clientInfo"
	MetaLogLevel               = "io.modelcontextprotocol/logLevel"
	MetaServerInfo             = "io.modelcontextprotocol/serverInfo"
	MetaSubscriptionID         = "io.modelcontextprotocol/subscriptionId"
	MetaRelatedTask            = "io.modelcontextprotocol/related-task"
	MetaModelImmediateResponse = "io.modelcontextprotocol/model-immediate-response"
	MetaProgressToken          = "progressToken"
)

// Extension identifiers.
const (
	// ExtensionTasks is the 2026-07-28 tasks extension.
	ExtensionTasks = "io.modelcontextprotocol/tasks"
)

// Result types (modern era).
const (
	ResultTypeComplete      = "complete"
	ResultTypeInputRequired = "input_required"
	ResultTypeTask          = "task"
)

// Cache scopes (modern era).
const (
	CacheScopePublic  = "public"
	CacheScopePrivate = "private"
)

// HTTP header names.
const (
	HeaderProtocolVersion = "MCP-Protocol-Version"
	HeaderSessionID       = "Mcp-Session-Id"
	HeaderMethod          = "Mcp-Method"
	HeaderName            = "Mcp-Name"
	HeaderParamPrefix     = "Mcp-Param-"
	HeaderLastEventID     = "Last-Event-ID"
)
