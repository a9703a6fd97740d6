package negotiation_test

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// TestParseInitializeResultAllocs: the common shape costs at most 5
// allocations (the version string, the server info and its one string,
// the tools capability, the scan), half or less of encoding/json's.
func TestParseInitializeResultAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	raw := []byte(`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"S","version":"1"}}`)
	n := testing.AllocsPerRun(100, func() {
		if _, err := negotiation.ParseInitializeResult(raw); err != nil {
			t.Fatal(err)
		}
	})
	decoded := testing.AllocsPerRun(100, func() {
		var r protocol.InitializeResult
		if err := json.Unmarshal(raw, &r); err != nil {
			t.Fatal(err)
		}
	})
	if n > 5 || 2*n > decoded {
		t.Errorf("ParseInitializeResult allocates %v times (encoding/json %v), want at most 5 and half", n, decoded)
	}
}
