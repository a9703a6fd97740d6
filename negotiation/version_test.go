package negotiation_test

import (
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/google/go-cmp/cmp"
)

func TestVersions(t *testing.T) {
	if diff := cmp.Diff([]string{v2026, v1125, v0618}, negotiation.Versions()); diff != "" {
		t.Errorf("Versions() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{v2026}, negotiation.ModernVersions()); diff != "" {
		t.Errorf("ModernVersions() mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{v1125, v0618}, negotiation.LegacyVersions()); diff != "" {
		t.Errorf("LegacyVersions() mismatch (-want +got):\n%s", diff)
	}
	// Each call returns a fresh slice.
	v := negotiation.Versions()
	v[0] = "mutated"
	if negotiation.Versions()[0] != v2026 {
		t.Errorf("Versions() shares its backing array")
	}
}

func TestEraOf(t *testing.T) {
	tests := []struct {
		in   string
		want negotiation.Era
	}{
		{"2026-07-28", negotiation.EraModern},
		{"2026-07-29", negotiation.EraModern},
		{"2030-01-01", negotiation.EraModern},
		{"2026-07-27", negotiation.EraLegacy},
		{"2025-11-25", negotiation.EraLegacy},
		{"2025-06-18", negotiation.EraLegacy},
		{"2024-11-05", negotiation.EraLegacy},
		{"", negotiation.EraUnknown},
		{"latest", negotiation.EraUnknown},
		{"2026-7-28", negotiation.EraUnknown},
		{"2026-13-01", negotiation.EraUnknown},
		{"2026-02-30", negotiation.EraUnknown},
		{"2026-07-28 ", negotiation.EraUnknown},
		{"2026/07/28", negotiation.EraUnknown},
		{"9999-99-99", negotiation.EraUnknown},
	}
	for _, tc := range tests {
		if got := negotiation.EraOf(tc.in); got != tc.want {
			t.Errorf("EraOf(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestPickVersion(t *testing.T) {
	tests := []struct {
		name           string
		server, client []string
		want           string
	}{
		{"seed example: client order wins", []string{v0618, v1125}, nil, v1125},
		{"modern preferred by default", []string{v0618, v2026}, nil, v2026},
		{"explicit client order", []string{v2026, v1125}, []string{v1125, v2026}, v1125},
		{"empty client means default", []string{v0618}, []string{}, v0618},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := negotiation.PickVersion(tc.server, tc.client)
			if err != nil || got != tc.want {
				t.Errorf("PickVersion(%v, %v) = %q, %v; want %q", tc.server, tc.client, got, err, tc.want)
			}
		})
	}
	for _, tc := range []struct {
		name           string
		server, client []string
	}{
		{"seed example: 2024-11-05 only", []string{"2024-11-05"}, nil},
		{"empty server", nil, nil},
		{"disjoint", []string{v2026}, []string{v1125}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := negotiation.PickVersion(tc.server, tc.client)
			var ne *negotiation.Error
			if !errors.As(err, &ne) || ne.Kind != negotiation.KindNoCommonVersion || got != "" {
				t.Errorf("PickVersion(%v, %v) = %q, %v; want *Error{KindNoCommonVersion}", tc.server, tc.client, got, err)
			}
		})
	}
}

func TestIsModernError(t *testing.T) {
	for code, want := range map[int64]bool{
		jsonrpc.CodeHeaderMismatch:                  true,
		jsonrpc.CodeMissingRequiredClientCapability: true,
		jsonrpc.CodeUnsupportedProtocolVersion:      true,
		jsonrpc.CodeMethodNotFound:                  false,
		jsonrpc.CodeInvalidParams:                   false,
		-32019:                                      false,
		-32023:                                      false,
		0:                                           false,
	} {
		if got := negotiation.IsModernError(code); got != want {
			t.Errorf("IsModernError(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestUnsupportedProtocolVersionErrorIs(t *testing.T) {
	err := error(&negotiation.UnsupportedProtocolVersionError{Supported: []string{v1125}, Requested: v2026})
	if !errors.Is(err, jsonrpc.ErrUnsupportedProtocolVersion) {
		t.Errorf("errors.Is(%v, ErrUnsupportedProtocolVersion) = false", err)
	}
	if !errors.Is(err, jsonrpc.NewError(jsonrpc.CodeUnsupportedProtocolVersion, "from the wire")) {
		t.Errorf("errors.Is(%v, wire -32022) = false", err)
	}
	if errors.Is(err, jsonrpc.ErrMethodNotFound) {
		t.Errorf("errors.Is(%v, ErrMethodNotFound) = true", err)
	}
	wrapped := &negotiation.Error{Kind: negotiation.KindNoCommonVersion, Err: err}
	var upv *negotiation.UnsupportedProtocolVersionError
	if !errors.As(wrapped, &upv) || upv.Requested != v2026 {
		t.Errorf("errors.As(%v) = %v", wrapped, upv)
	}
}
