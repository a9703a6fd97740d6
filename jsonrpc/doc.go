// Package jsonrpc implements the JSON-RPC 2.0 messages that MCP is built on.
//
// A [Message] is either a [*Request] (which, without an [ID], is a
// notification) or a [*Response]. Params and results stay raw JSON
// ([encoding/json.RawMessage]) until a caller asks for them, so a message is
// decoded once on the hot path and never re-encoded to be forwarded.
//
// [DecodeMessage] is the hot path of every transport. It scans the message
// once, without reflection, and in the common case allocates at most three
// times (the message, one copy of the raw params, result or error data, and
// one string for the string id, error message, or a method name that is
// not one of MCP's); it never retains its input.
// It accepts the JSON encoding/json accepts, nesting up to 10000 levels,
// and reads member names as encoding/json would (case-insensitively when
// no name matches exactly, the last of duplicate members winning).
// [DecodeMessageOwned] is the same decoder for a buffer the caller hands
// over: the raw members alias it instead of being copied, which saves a
// copy of large results (the transports use it for messages too large for
// their reusable buffers).
//
// [ID] keeps the two JSON types of a request id apart: the integer 1 and the
// string "1" are different ids, as JSON-RPC requires.
//
// # Errors
//
// Protocol errors are one type, [*Error]. Its Is method matches on the code,
// so the exported sentinels work across the wire:
//
//	if errors.Is(err, jsonrpc.ErrMethodNotFound) { … }
//
// Every code the SDK knows is named once in this package: the JSON-RPC 2.0
// codes, the MCP codes of the legacy era and the modern (2026-07-28) codes
// -32020, -32021 and -32022. Malformed input is reported as a
// [*DecodeError], never a panic.
//
// # Concurrency
//
// Every function in this package is safe to call concurrently. Messages are
// plain values; do not mutate one while another goroutine encodes it.
package jsonrpc
