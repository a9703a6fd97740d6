// Package handler defines what a client application may do for a server:
// answer sampling, elicitation and roots requests, and listen to
// notifications.
//
// A handler is any value. The client looks, once at connect, for the
// single-method interfaces below, following an optional Unwrap() any chain
// (so wrappers such as middleware keep the methods of what they wrap). The
// client capabilities it advertises are exactly what it finds: implement
// nothing and the client advertises {}. The recognized interfaces:
//
//   - [Sampler]: sampling/createMessage (capability sampling)
//   - [Elicitor]: elicitation/create in form mode (capability elicitation.form)
//   - [URLElicitor]: elicitation/create in URL mode (capability elicitation.url)
//   - [RootsLister]: roots/list (capability roots)
//   - [LogListener]: notifications/message
//   - [ToolsChangedListener], [PromptsChangedListener],
//     [ResourcesChangedListener]: the list_changed notifications
//   - [ResourceUpdatedListener]: notifications/resources/updated
//   - [ElicitationCompleteListener]: notifications/elicitation/complete
//   - [TaskStatusListener]: notifications/tasks/status
//
// The same methods serve both eras: legacy server-to-client requests and
// modern multi-round-trip (input_required) rounds.
//
// Three mistakes make a handler miss a method it was written to have:
// methods declared on the pointer type while the value is passed, a
// misspelt method name, and a wrong signature. [Check] reports each, even
// beside methods that are right, naming the method it looks meant for and
// its signature, for example
//
//	handler: main.h: OnToolChanged looks like a misspelling of OnToolsChanged (ToolsChangedListener)
//
// (the client refuses such a handler at connect), and [Funcs] avoids them:
// a struct of function fields the compiler checks,
// implementing exactly the interfaces whose fields are set. The protocol
// package builds the results (protocol.TextMessageResult,
// protocol.AcceptElicitation, …).
//
// # Concurrency
//
// Request methods (Sampler, Elicitor, URLElicitor, RootsLister) may be
// called concurrently, each on its own goroutine, and may block (for
// example on a human); their context is cancelled when the server cancels
// the request or the client closes. Listener methods are called one at a
// time, in arrival order, from one dispatcher goroutine per connection; a
// slow listener delays later notifications but never responses.
//
// # Errors
//
// A request method's error is sent to the server. Return a
// *jsonrpc.Error to choose the code; any other error is sent as an internal
// error (legacy era) or abandons the request with a local error (modern
// era, which has no error slot for input responses).
package handler
