package engine

import (
	"slices"
	"strconv"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// OlderVersionsOption names the client option that widens the versions
// with [negotiation.OlderVersions]; the error of a server that answers
// with one of them without it names the option.
const OlderVersionsOption = "client.WithOlderVersions(true)"

// The version lists of [Session.versions], made once; never modified.
var (
	defaultVersions = negotiation.VersionsFor(false)
	widerVersions   = negotiation.VersionsFor(true)
)

// versions returns the versions the session speaks, newest first: the
// default list, widened by [Config.OlderVersions]. The slice is shared:
// callers must not modify it.
func (s *Session) versions() []string {
	if s.cfg.OlderVersions {
		return widerVersions
	}
	return defaultVersions
}

// speaksLegacy reports whether v is a legacy version the session speaks.
func (s *Session) speaksLegacy(v string) bool {
	return negotiation.EraOf(v) == negotiation.EraLegacy && slices.Contains(s.versions(), v)
}

// legacyVersionError returns the typed error for an initialize answered
// with version on a connection of transport kind kind, or nil when the
// session speaks version there: a version outside the list (one of the
// older versions without the option, which the message names), or
// 2024-11-05 over Streamable HTTP, which that version does not have (its
// HTTP transport is HTTP+SSE).
func (s *Session) legacyVersionError(version, requested, kind string) *negotiation.Error {
	var reason string
	switch {
	case !s.speaksLegacy(version) && negotiation.IsOlder(version):
		reason = "initialize answered with version " + strconv.Quote(version) + ", an older version spoken only with " + OlderVersionsOption
	case !s.speaksLegacy(version):
		reason = "initialize answered with version " + strconv.Quote(version)
	case kind == transport.KindHTTP && !negotiation.FeaturesOf(version).StreamableHTTP:
		reason = "initialize answered with version " + strconv.Quote(version) + " over Streamable HTTP, which that version does not have (it speaks HTTP+SSE)"
	default:
		return nil // the common case: nothing built
	}
	upv := &negotiation.UnsupportedProtocolVersionError{Supported: []string{version}, Requested: requested}
	return &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Reason: reason, Err: upv}
}

// lacksElicitation returns the error that refuses an elicitation/create
// at a negotiated version without elicitation (before 2025-06-18), as a
// server of that version expects: method not found. It returns nil at
// every other version.
func (s *Session) lacksElicitation() error {
	v := s.ProtocolVersion()
	if negotiation.FeaturesOf(v).Elicitation {
		return nil
	}
	return jsonrpc.ErrMethodNotFound.WithMessage(protocol.MethodElicitationCreate + " is not part of protocol version " + v)
}
