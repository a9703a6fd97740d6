package negotiation_test

import (
	"slices"
	"testing"

	"github.com/conduitmcp/conduit/negotiation"
)

func TestVersionsFor(t *testing.T) {
	if got := negotiation.VersionsFor(false); !slices.Equal(got, negotiation.Versions()) {
		t.Errorf("VersionsFor(false) = %v; want the default %v", got, negotiation.Versions())
	}
	want := []string{"2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	if got := negotiation.VersionsFor(true); !slices.Equal(got, want) {
		t.Errorf("VersionsFor(true) = %v; want %v", got, want)
	}
	for _, v := range negotiation.OlderVersions() {
		if !negotiation.IsOlder(v) || negotiation.EraOf(v) != negotiation.EraLegacy {
			t.Errorf("%s: IsOlder %v, era %v; want true, legacy", v, negotiation.IsOlder(v), negotiation.EraOf(v))
		}
		if _, err := negotiation.PickVersion([]string{v}, nil); err == nil {
			t.Errorf("PickVersion(%s) with the default list succeeded", v)
		}
		if got, err := negotiation.PickVersion([]string{v}, negotiation.VersionsFor(true)); err != nil || got != v {
			t.Errorf("PickVersion(%s) with the older versions = %q, %v", v, got, err)
		}
	}
	for _, v := range negotiation.Versions() {
		if negotiation.IsOlder(v) {
			t.Errorf("IsOlder(%s) = true", v)
		}
	}
}

func TestFeaturesOf(t *testing.T) {
	all := negotiation.Features{StreamableHTTP: true, StructuredContent: true, Elicitation: true, Titles: true}
	for v, want := range map[string]negotiation.Features{
		"2024-11-05": {},
		"2025-03-26": {StreamableHTTP: true, Batches: true},
		"2025-06-18": all,
		"2025-11-25": all,
		"2026-07-28": all,
	} {
		if got := negotiation.FeaturesOf(v); got != want {
			t.Errorf("FeaturesOf(%s) = %+v; want %+v", v, got, want)
		}
	}
}
