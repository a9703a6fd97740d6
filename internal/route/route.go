// Package route is the client's dispatch table: every MCP method the
// client routes, with what the connection engine (package session) does
// with it. The engine dispatches incoming server requests and
// notifications by the Route this table gives, and jsonrpc's interned
// method names (jsonrpc/methods.go) are built from the same table, so
// there is no second, hand-maintained list of methods (seed 002,
// methods()). The package sits below both jsonrpc and session so that
// either may import it without a cycle.
package route

import (
	"iter"

	"github.com/conduitmcp/conduit/protocol"
)

// Route is what the engine does with a method.
type Route uint8

const (
	// None: not a method the client routes.
	None Route = iota
	// Call: a request the client sends, through the engine's send path.
	Call
	// Notify: a notification the client sends.
	Notify

	// ServePing: a server's ping, answered {} by the engine.
	ServePing
	// ServeSampling: sampling/createMessage, served by the handler's
	// Sampler.
	ServeSampling
	// ServeElicitation: elicitation/create, served by the handler's
	// Elicitor or URLElicitor.
	ServeElicitation
	// ServeRoots: roots/list, served by the handler's RootsLister.
	ServeRoots

	// Cancelled: notifications/cancelled; the engine cancels the server
	// request (or ends the listen stream) it names.
	Cancelled
	// Progress: notifications/progress; the engine hands it to the call
	// whose progressToken it carries.
	Progress
	// Acknowledged: a listen stream's acknowledgement, delivered on its
	// stream.
	Acknowledged
	// LogMessage: notifications/message, for the handler's LogListener.
	LogMessage
	// ToolsChanged, PromptsChanged, ResourcesChanged: the list_changed
	// notifications, for the listeners, caches and subscriptions.
	ToolsChanged
	PromptsChanged
	ResourcesChanged
	// ResourceUpdated: notifications/resources/updated.
	ResourceUpdated
	// ElicitationComplete: a URL-mode elicitation finished.
	ElicitationComplete
	// TaskStatus: a task's status changed (tasks extension).
	TaskStatus
)

// Entry is one row of the table.
type Entry struct {
	Method string
	Route  Route
}

// table is the dispatch table. Every method name appears once.
var table = [...]Entry{
	{protocol.MethodInitialize, Call},
	{protocol.MethodPing, Call}, // both ways: see Of
	{protocol.MethodDiscover, Call},
	{protocol.MethodToolsList, Call},
	{protocol.MethodToolsCall, Call},
	{protocol.MethodPromptsList, Call},
	{protocol.MethodPromptsGet, Call},
	{protocol.MethodResourcesList, Call},
	{protocol.MethodResourcesTemplateList, Call},
	{protocol.MethodResourcesRead, Call},
	{protocol.MethodResourcesSubscribe, Call},
	{protocol.MethodResourcesUnsubscribe, Call},
	{protocol.MethodSubscriptionsListen, Call},
	{protocol.MethodCompletionComplete, Call},
	{protocol.MethodLoggingSetLevel, Call},
	{protocol.MethodTasksGet, Call},
	{protocol.MethodTasksResult, Call},
	{protocol.MethodTasksList, Call},
	{protocol.MethodTasksCancel, Call},
	{protocol.MethodTasksUpdate, Call},

	{protocol.MethodSamplingCreateMessage, ServeSampling},
	{protocol.MethodElicitationCreate, ServeElicitation},
	{protocol.MethodRootsList, ServeRoots},

	{protocol.NotificationInitialized, Notify},
	{protocol.NotificationRootsListChanged, Notify},
	{protocol.NotificationCancelled, Cancelled}, // both ways
	{protocol.NotificationProgress, Progress},
	{protocol.NotificationMessage, LogMessage},
	{protocol.NotificationToolsListChanged, ToolsChanged},
	{protocol.NotificationPromptsListChanged, PromptsChanged},
	{protocol.NotificationResourcesListChanged, ResourcesChanged},
	{protocol.NotificationResourcesUpdated, ResourceUpdated},
	{protocol.NotificationElicitationComplete, ElicitationComplete},
	{protocol.NotificationTasksStatus, TaskStatus},
	{protocol.NotificationTasks, TaskStatus},
	{protocol.NotificationSubscriptionsAcknowledged, Acknowledged},
}

var byMethod = func() map[string]Route {
	m := make(map[string]Route, len(table))
	for _, e := range table {
		if _, dup := m[e.Method]; dup {
			panic("route: " + e.Method + " appears twice in the dispatch table")
		}
		m[e.Method] = e.Route
	}
	return m
}()

// Of returns the route of method; None when the client does not route
// it. A request from the server is routed by Incoming.
func Of(method string) Route { return byMethod[method] }

// Incoming returns the route of a request the server sent: ping is
// answered by the engine; the others as Of says.
func Incoming(method string) Route {
	if method == protocol.MethodPing {
		return ServePing
	}
	return Of(method)
}

// All yields every row of the table, in its order.
func All() iter.Seq[Entry] {
	return func(yield func(Entry) bool) {
		for _, e := range table {
			if !yield(e) {
				return
			}
		}
	}
}

// Methods yields every method name the client routes.
func Methods() iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, e := range table {
			if !yield(e.Method) {
				return
			}
		}
	}
}
