// Package protocol holds the MCP wire types of both protocol eras: the modern
// era (2026-07-28: stateless, per-request _meta, server/discover, MRTR,
// subscriptions/listen) and the legacy era (2025-11-25 and 2025-06-18:
// initialize, sessions, server-to-client requests).
//
// One Go type serves every version that has the shape; fields that exist
// only in some versions say so in their comments and are omitted when
// empty. JSON Schemas (inputSchema, outputSchema, elicitation's
// requestedSchema) and values the spec leaves open are kept as
// [encoding/json.RawMessage], so nothing a server sends is lost and nothing
// is decoded twice. Where the spec allows extension (_meta, capabilities'
// experimental and extensions maps, unknown members of embedded input
// requests) unknown members survive a decode/encode round trip.
//
// Where absence and an empty value mean different things on the wire the
// field is a pointer: cursors and nextCursor (an empty cursor is still a
// cursor), MRTR's requestState (echoed byte for byte, absent vs ""),
// ttlMs, isError, hasMore.
//
// Method names, _meta keys and version strings are constants here, so the
// rest of the SDK never spells a wire string twice.
//
// The files follow the spec's feature areas:
//
//   - core.go, meta.go, ids.go, base.go: capabilities, Implementation,
//     server/discover, initialize, _meta helpers ([RequestMeta]),
//     [RequestID] and [ProgressToken], empty and paginated params,
//     [ResultTypeOf];
//   - tools.go, prompts.go, resources.go, completion.go, content.go: the
//     server features and content blocks;
//   - mrtr.go: [InputRequiredResult], [InputRequest], [InputResponses];
//   - listen.go: subscriptions/listen ([SubscriptionFilter]);
//   - notifications.go, logging.go: notification params;
//   - client_features.go, elicitation_schema.go: sampling, elicitation
//     (with [ParseRequestedSchema]) and roots;
//   - tasks.go: 2025-11-25 core tasks and the 2026 tasks extension;
//   - errordata.go: the data members of the MCP error codes.
//
// # Errors
//
// Decoding uses [encoding/json]; its errors are returned as they are.
// [ParsePrimitiveSchema] and [ParseRequestedSchema] return errors wrapping
// [ErrInvalidSchema]. Lenient accessors ([Meta.ServerInfo],
// [Meta.SubscriptionID], …) treat malformed values as absent instead of
// failing.
//
// # Concurrency
//
// The types are plain data; they are safe for concurrent reads.
package protocol
