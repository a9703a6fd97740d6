package client

import (
	"fmt"
	"slices"

	"github.com/conduitmcp/conduit/negotiation"
)

// WithOlderVersions, with true, widens the protocol versions the client
// speaks with 2025-03-26 and 2024-11-05 ([negotiation.OlderVersions]),
// after the default 2026-07-28, 2025-11-25 and 2025-06-18, with their wire
// differences handled: 2024-11-05 over HTTP is the HTTP+SSE transport
// (Dial falls back to it; a Streamable HTTP server answering 2024-11-05 is
// refused), 2025-03-26 and 2024-11-05 have no structured content, no
// titles and no elicitation (an elicitation/create from such a server is
// answered "method not found"), and 2025-03-26 may send JSON-RPC batches
// (every transport decodes them, and the requests among them are answered
// one by one). It also allows [WithProtocol] to pin one of them.
//
// Without it (the default), a server that answers initialize with one of
// them fails Connect with an error matching [ErrNoCommonVersion] whose
// message names this option. Tools that exist to reach any server (the
// conduit CLI, the conformance client) turn it on.
func WithOlderVersions(on bool) Option {
	return optionFunc(func(c *config) { c.olderVersions = on })
}

// checkPin checks a pinned version: one of the versions the client speaks
// (the older ones only with WithOlderVersions).
func checkPin(v string, older bool) error {
	if negotiation.IsOlder(v) && !older {
		return fmt.Errorf("pinned protocol version %q is an older version spoken only with client.WithOlderVersions(true): %w", v, ErrNoCommonVersion)
	}
	if negotiation.EraOf(v) == negotiation.EraUnknown || !slices.Contains(negotiation.VersionsFor(older), v) {
		return fmt.Errorf("pinned protocol version %q is not one this SDK speaks: %w", v, ErrNoCommonVersion)
	}
	return nil
}
