package protocol

// SubscriptionFilter selects the notifications a subscriptions/listen
// stream delivers (2026-07-28). Omitted or false members are not
// subscribed. The server's acknowledgement echoes the subset it honours.
type SubscriptionFilter struct {
	ToolsListChanged     bool `json:"toolsListChanged,omitempty"`
	PromptsListChanged   bool `json:"promptsListChanged,omitempty"`
	ResourcesListChanged bool `json:"resourcesListChanged,omitempty"`
	// ResourceSubscriptions lists resource URIs to receive
	// notifications/resources/updated for.
	ResourceSubscriptions []string `json:"resourceSubscriptions,omitempty"`
	// TaskIDs lists task ids to receive notifications/tasks for (tasks
	// extension; needs the extension in the request's capabilities).
	TaskIDs []string `json:"taskIds,omitempty"`
}

// Missing returns the parts of want that f (an acknowledgement) does not
// include: flags set in want but not in f, and URIs and task ids of want
// absent from f. The zero result means everything was honoured.
func (f SubscriptionFilter) Missing(want SubscriptionFilter) SubscriptionFilter {
	var m SubscriptionFilter
	m.ToolsListChanged = want.ToolsListChanged && !f.ToolsListChanged
	m.PromptsListChanged = want.PromptsListChanged && !f.PromptsListChanged
	m.ResourcesListChanged = want.ResourcesListChanged && !f.ResourcesListChanged
	m.ResourceSubscriptions = missingStrings(want.ResourceSubscriptions, f.ResourceSubscriptions)
	m.TaskIDs = missingStrings(want.TaskIDs, f.TaskIDs)
	return m
}

// IsEmpty reports whether f subscribes to nothing.
func (f SubscriptionFilter) IsEmpty() bool {
	return !f.ToolsListChanged && !f.PromptsListChanged && !f.ResourcesListChanged &&
		len(f.ResourceSubscriptions) == 0 && len(f.TaskIDs) == 0
}

func missingStrings(want, have []string) []string {
	if len(want) == 0 {
		return nil
	}
	set := make(map[string]struct{}, len(have))
	for _, s := range have {
		set[s] = struct{}{}
	}
	var out []string
	for _, s := range want {
		if _, ok := set[s]; !ok {
			out = append(out, s)
		}
	}
	return out
}

// ListenParams are the params of subscriptions/listen (2026-07-28):
// the required per-request _meta and the filter.
type ListenParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}

// ListenResult is the result that gracefully ends a subscriptions/listen
// stream (2026-07-28). Its _meta carries the required
// io.modelcontextprotocol/subscriptionId (see [Meta.SubscriptionID]).
type ListenResult struct {
	ResultType string `json:"resultType,omitempty"`
	Meta       Meta   `json:"_meta,omitempty"`
}

// SubscriptionsAcknowledgedParams are the params of
// notifications/subscriptions/acknowledged (2026-07-28), the first
// message of a listen stream: the filter the server will honour, and
// io.modelcontextprotocol/subscriptionId in _meta.
type SubscriptionsAcknowledgedParams struct {
	Notifications SubscriptionFilter `json:"notifications"`
	Meta          Meta               `json:"_meta,omitempty"`
}
