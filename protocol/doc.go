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
// experimental and extensions maps) unknown members survive a decode/encode
// round trip.
//
// Method names, _meta keys and version strings are constants here, so the
// rest of the SDK never spells a wire string twice.
//
// # Concurrency
//
// The types are plain data; they are safe for concurrent reads.
package protocol
