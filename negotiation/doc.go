// Package negotiation holds the pure decisions a dual-era MCP client makes
// before it talks to a server: which protocol versions it speaks and to
// which era each belongs ([Versions], [EraOf]), which older versions it
// speaks on request and what each version has on the wire
// ([OlderVersions], [VersionsFor], [FeaturesOf]), which version to use
// ([PickVersion]), what a server/discover answer says ([ParseDiscoverResult]),
// what the outcome of a server/discover probe means ([ClassifyProbe]) and
// which client capabilities to advertise ([ClientCapabilities]).
//
// Everything here is a function of its arguments: there is no I/O, no
// goroutine, no clock, no logging and no global state. The session layer
// performs the exchange, normalizes it into an [Outcome], and acts on the
// [Verdict].
//
// # Probe classification
//
// [ClassifyProbe] implements the probe table of the seeds (ConduitMCP
// Client.Negotiation and the TypeScript SDK's probe classifier):
//
//	transport  outcome                                               verdict
//	both       valid DiscoverResult with a mutual modern version     Modern
//	both       DiscoverResult-shaped but invalid                     Error (KindProtocol)
//	both       DiscoverResult with no mutual modern version          Error (KindProtocol)
//	both       a result that is not DiscoverResult-shaped            Legacy
//	both       -32022 with a mutual modern version in data.supported Corrective
//	both       -32022 sharing only a legacy version                  Legacy with Version set
//	both       -32022 without a common version                       Error (KindNoCommonVersion)
//	both       -32021 / -32020                                       Error (KindProtocol), never a fallback
//	stdio      any other JSON-RPC error                              Legacy
//	stdio      timeout                                               Legacy
//	stdio      the server process exited during the probe            Reconnect
//	HTTP       401 / 403                                             Authorize
//	HTTP       408 / 429 / 5xx, network error, timeout               Retry, never a downgrade
//	HTTP       2xx with a non-DiscoverResult result or non-modern
//	           JSON-RPC error                                        Legacy
//	HTTP       400 / 404 / 405 with a non-modern body                Legacy
//	HTTP       any status with JSON-RPC -32601                       Legacy
//	HTTP       any other status or error                             Error (KindHTTP)
//
// Modern evidence in an HTTP body (a DiscoverResult-shaped result or a
// -32020/-32021/-32022 error) wins over the status rows, and so does
// -32601 ("any status"). A recognized modern error is never legacy
// evidence, and the fallback is never keyed to one error code. A
// DiscoverResult-shaped result is an object with a resultType or a
// supportedVersions member.
//
// An HTTP body is read as an event stream for text/event-stream (the first
// event whose data is a JSON-RPC response counts) and as JSON otherwise
// (application/json, or a missing or mislabeled content type); an error
// object with an integer code is recognized even in an envelope that lacks
// its id or "jsonrpc" member. A -32022 whose data.supported shares only a
// legacy version with the client yields a Legacy verdict whose Version is
// that version (open question A5).
//
// Without a fallback ([ProbeContext].FallbackAvailable false: a modern-only
// or pinned client), modern evidence without a usable version becomes an
// [*UnsupportedProtocolVersionError] built from that evidence, and every row
// that would have fallen back to initialize (Legacy and Reconnect) becomes an
// Error verdict with an [*Error] of kind [KindNegotiation].
package negotiation
