package jsonrpc

// commonMethods maps the method names of MCP to themselves, so decoding
// them returns a constant string instead of allocating one.
var commonMethods = func() map[string]string {
	m := make(map[string]string)
	for _, name := range []string{
		"initialize",
		"ping",
		"server/discover",
		"tools/list",
		"tools/call",
		"prompts/list",
		"prompts/get",
		"resources/list",
		"resources/templates/list",
		"resources/read",
		"resources/subscribe",
		"resources/unsubscribe",
		"subscriptions/listen",
		"completion/complete",
		"logging/setLevel",
		"tasks/get",
		"tasks/result",
		"tasks/list",
		"tasks/cancel",
		"tasks/update",
		"sampling/createMessage",
		"elicitation/create",
		"roots/list",
		"notifications/initialized",
		"notifications/cancelled",
		"notifications/progress",
		"notifications/message",
		"notifications/tools/list_changed",
		"notifications/prompts/list_changed",
		"notifications/resources/list_changed",
		"notifications/resources/updated",
		"notifications/roots/list_changed",
		"notifications/elicitation/complete",
		"notifications/tasks/status",
		"notifications/tasks",
		"notifications/subscriptions/acknowledged",
	} {
		m[name] = name
	}
	return m
}()
