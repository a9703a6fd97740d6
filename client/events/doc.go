// Package events is a client of the MCP events extension
// (io.modelcontextprotocol/events, SEP-3415, experimental): it lists a
// server's event types and subscribes to them in the delivery mode each
// type offers.
//
//	ec := events.New(c, events.Options{})
//	for d, err := range ec.List(ctx) { … }
//	sub, err := ec.Subscribe(ctx, "incident.created", events.SubscribeOptions{Arguments: map[string]any{"severity": "P1"}})
//	defer sub.Close()
//	for ev := range sub.Events() { … }
//
// The extension is defined for protocol revision 2026-07-28: every method
// needs a client that negotiated the modern era with a server that
// declared the extension in its capabilities. Otherwise no events/*
// request is sent and the call fails with a *client.Error of kind
// client.KindUnsupported matching client.ErrNotSupported. That holds on
// every transport: stdio, Streamable HTTP, WebSocket, in-memory pipes.
//
// # Delivery modes
//
// [Client.Subscribe] picks the mode the caller asks for
// ([SubscribeOptions.Mode]) or, by default, the first the event type
// offers of push, poll and webhook (webhook only when
// [SubscribeOptions.Webhook] names a callback URL):
//
//   - Poll: events/poll in a loop, waiting the server's nextPollMs (never
//     less than [Options.PollFloor], 1 s by default) unless the result
//     says hasMore, in which case the next poll follows at once (when the
//     result brought an event not delivered before: a server that says
//     hasMore with nothing new is waited for as without it).
//   - Push: one events/stream request, whose notifications/events/event
//     notifications become events. A stream that is silent (no event, no
//     heartbeat) for three of its longest heartbeat intervals seen so far
//     (at least 500 ms), or for [Options.HeartbeatTimeout] (60 s: twice
//     the extension's longest heartbeat interval) whichever is shorter, is
//     treated as dead, and so is one that dropped: the subscription opens a new one, with its
//     cursor, after a backoff (doubling from 250 ms to
//     [Options.MaxBackoff], and back to 250 ms only after a stream that
//     lived 10 s past its notifications/events/active, so that a server
//     whose streams end at once is not hammered).
//   - Webhook: events/subscribe with a callback URL the application
//     serves and a signing secret generated here, refreshed before the
//     granted refreshBefore (after grants in a row whose refreshBefore
//     cannot be read or has passed, with a backoff doubling from 250 ms
//     to [Options.MaxBackoff], not at once), and events/unsubscribe on
//     Close. Deliveries
//     reach the subscription's Events when the URL is served by a
//     [Receiver] given in [WebhookOptions.Receiver], which verifies the
//     Standard Webhooks signatures, answers the verification handshake
//     and drops replays.
//
// # Cursors
//
// A subscription keeps the last cursor the server gave it (a poll
// result's, an event's, a heartbeat's, a webhook refresh's) and resumes
// from it: every poll, every reconnected stream and every refresh sends
// it. A null (or absent) cursor is never replayed: the next request says
// null ("start from now"). [Subscription.Cursor] returns it for a caller
// that persists it, and [SubscribeOptions.Cursor] resumes from a
// persisted one. A cursor advances only once the events before it were
// handed to the consumer, so a slow consumer slows polling and push
// (which reconnects with its cursor) instead of losing events. A result
// with truncated set (and a webhook gap envelope) is reported as an
// [Event] with Gap set: events may have been skipped. Events are
// de-duplicated by eventId over the last 1024.
//
// On notifications/events/list_changed the subscriptions re-list the
// event types before their next request, and end when their type is gone
// or no longer offers their mode.
//
// # Concurrency
//
// A [Client], a [Subscription] and a [Receiver] are safe for concurrent
// use. Each subscription runs one goroutine, stopped and joined by
// [Subscription.Close]; [client.Client.Close] ends them too.
//
// # Errors
//
// Every error is a *client.Error (Op the events/* method) or wraps one. A
// server's refusal (NotFound, Forbidden, Unsupported, InvalidParams) is a
// *jsonrpc.Error reachable with errors.As; a subscription the server
// terminated ends with an error matching [ErrTerminated] and the
// server's *jsonrpc.Error. A subscription gives up after 10 failed
// attempts in a row (polls, stream openings or refreshes that failed
// without an answer, and push streams that ended before the server
// confirmed them).
package events
