package negotiation

import (
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// Era is the protocol era of a version: the modern era (2026-07-28 and
// later, stateless, server/discover) or the legacy era (earlier dates, the
// initialize handshake).
type Era int

// The eras. The zero value is EraUnknown.
const (
	// EraUnknown is the era of a string that is not a YYYY-MM-DD date.
	EraUnknown Era = iota
	// EraModern is 2026-07-28 and later.
	EraModern
	// EraLegacy is every valid date before 2026-07-28.
	EraLegacy
)

// String returns "unknown", "modern" or "legacy".
func (e Era) String() string {
	switch e {
	case EraModern:
		return "modern"
	case EraLegacy:
		return "legacy"
	}
	return "unknown"
}

// firstModern is the first version of the modern era.
const firstModern = protocol.Version20260728

// Versions returns every protocol version the client speaks, newest first:
// 2026-07-28, 2025-11-25, 2025-06-18. Each call returns a fresh slice.
func Versions() []string {
	return []string{protocol.Version20260728, protocol.Version20251125, protocol.Version20250618}
}

// ModernVersions returns the modern-era versions of [Versions], newest first.
func ModernVersions() []string { return filterEra(Versions(), EraModern) }

// LegacyVersions returns the legacy-era versions of [Versions], newest first.
func LegacyVersions() []string { return filterEra(Versions(), EraLegacy) }

// EraOf returns the era of a protocol version string: dates (YYYY-MM-DD) on
// or after 2026-07-28 are [EraModern], earlier dates [EraLegacy], anything
// else [EraUnknown].
func EraOf(version string) Era {
	switch version { // the versions the client speaks, without parsing
	case protocol.Version20260728:
		return EraModern
	case protocol.Version20251125, protocol.Version20250618:
		return EraLegacy
	}
	if len(version) != len("2006-01-02") {
		return EraUnknown
	}
	if !isDate(version) {
		return EraUnknown
	}
	// Valid fixed-width dates order lexically.
	if version >= firstModern {
		return EraModern
	}
	return EraLegacy
}

// isDate reports whether s, ten bytes long, is a date as
// time.Parse(time.DateOnly, s) accepts it (the day checked against its
// month, leap years included), without time.Parse's cost: EraOf runs on
// every request's path.
func isDate(s string) bool {
	if s[4] != '-' || s[7] != '-' {
		return false
	}
	num := func(a, b int) (int, bool) {
		n := 0
		for i := a; i < b; i++ {
			c := s[i]
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	y, oky := num(0, 4)
	m, okm := num(5, 7)
	d, okd := num(8, 10)
	if !oky || !okm || !okd || m < 1 || m > 12 || d < 1 {
		return false
	}
	days := [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[m-1]
	if m == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}

// filterEra returns the entries of vs whose era is era, in order, as a new
// slice.
func filterEra(vs []string, era Era) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if EraOf(v) == era {
			out = append(out, v)
		}
	}
	return out
}

// PickVersion returns the first entry of client (the client's preference
// order) that server also lists. A nil or empty client means [Versions].
// When there is none it returns an [*Error] of kind [KindNoCommonVersion].
func PickVersion(server, client []string) (string, error) {
	if len(client) == 0 {
		client = Versions()
	}
	for _, c := range client {
		for _, s := range server {
			if c == s {
				return c, nil
			}
		}
	}
	return "", &Error{Kind: KindNoCommonVersion, Reason: ReasonNoCommonVersion}
}

// IsModernError reports whether code is one of the modern-era JSON-RPC
// errors (-32020, -32021, -32022) that prove the server speaks 2026-07-28.
func IsModernError(code int64) bool {
	switch code {
	case jsonrpc.CodeHeaderMismatch, jsonrpc.CodeMissingRequiredClientCapability, jsonrpc.CodeUnsupportedProtocolVersion:
		return true
	}
	return false
}
