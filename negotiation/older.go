package negotiation

import (
	"slices"

	"github.com/conduitmcp/conduit/protocol"
)

// OlderVersions returns the legacy versions a client speaks only on
// request, newest first: 2025-03-26 and 2024-11-05. [Versions] (the
// default) leaves them out; [VersionsFor] adds them.
func OlderVersions() []string {
	return []string{protocol.Version20250326, protocol.Version20241105}
}

// VersionsFor returns the versions a client speaks, newest first:
// [Versions], followed by [OlderVersions] when older is true. Each call
// returns a fresh slice.
func VersionsFor(older bool) []string {
	if older {
		return append(Versions(), OlderVersions()...)
	}
	return Versions()
}

// IsOlder reports whether version is one of [OlderVersions]: spoken only
// when the client asked for the older versions.
func IsOlder(version string) bool {
	return slices.Contains(OlderVersions(), version)
}

// Features is what a protocol version has on the wire, beyond the era:
// what the older versions lack, and the batches only 2025-03-26 allowed.
type Features struct {
	// StreamableHTTP: the Streamable HTTP transport exists (2025-03-26
	// and later); 2024-11-05 speaks HTTP+SSE over HTTP.
	StreamableHTTP bool
	// StructuredContent: tool results may carry structuredContent, and
	// tools an outputSchema (2025-06-18 and later).
	StructuredContent bool
	// Elicitation: a server may send elicitation/create (2025-06-18 and
	// later).
	Elicitation bool
	// Titles: tools, prompts, resources and implementations may carry a
	// display title (2025-06-18 and later).
	Titles bool
	// Batches: JSON-RPC batch arrays may arrive (2025-03-26 only: added
	// then, removed in 2025-06-18). Every transport decodes them anyway.
	Batches bool
}

// FeaturesOf returns the wire features of version. Versions newer than
// 2025-06-18 (and strings that are no version) have every feature but
// batches.
func FeaturesOf(version string) Features {
	switch version {
	case protocol.Version20241105:
		return Features{}
	case protocol.Version20250326:
		return Features{StreamableHTTP: true, Batches: true}
	}
	return Features{StreamableHTTP: true, StructuredContent: true, Elicitation: true, Titles: true}
}
