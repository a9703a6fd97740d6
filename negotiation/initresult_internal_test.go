package negotiation

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// initResultCases are initialize results, with whether the fast path
// reads them (plainInitializeResult).
var initResultCases = []struct {
	raw   string
	plain bool
}{
	{`{}`, true},
	{`{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"S","version":"1"}}`, true},
	{` { "protocolVersion" : "2025-06-18" , "capabilities" : { } , "serverInfo" : { "name" : "S" , "version" : "1" , "title" : "T" } , "instructions" : "use it" } `, true},
	{`{"capabilities":{"logging":{},"completions":{},"prompts":{},"resources":{"subscribe":true}},"serverInfo":{"name":"","version":""}}`, true},
	{`{"protocolVersion":"2025-11-25","protocolVersion":"2025-06-18"}`, false}, // duplicates: the last wins when decoded
	{`{"protocolVersion":"2025-11-25","ProtocolVersion":"2025-06-18"}`, false}, // keys match case-insensitively when decoded
	{`{"protocol\u0056ersion":"2025-11-25"}`, false},                           // an escaped key
	{`{"protocolVersion":"2025-11-\u0032\u0035"}`, false},                      // an escaped string
	{`{"protocolVersion":null,"instructions":null}`, false},                    // null leaves the zero value
	{`{"protocolVersion":7}`, false}, // an error when decoded
	{`{"capabilities":[]}`, false},   // an error when decoded
	{`{"capabilities":{"tasks":{"list":{}}},"serverInfo":{"name":"S","version":"1"}}`, false},
	{`{"serverInfo":{"name":"S","version":"1","icons":[]}}`, false},
	{`{"serverInfo":{"name":"S"}}`, false},
	{`{"serverInfo":"S"}`, false},
	{`{"_meta":{"k":1},"protocolVersion":"2025-11-25"}`, false},
	{`{"unknown":1}`, false},
	{"{\"instructions\":\"\xff\"}", false},
	{`{"protocolVersion":"2025-11-25"} x`, false}, // not JSON
	{`{"protocolVersion":"2025-11-25"`, false},
	{`[]`, false},
	{`null`, false},
	{``, false},
	{"\v{}", false}, // not JSON whitespace
}

// TestParseInitializeResultMatchesDecoding: ParseInitializeResult gives
// what encoding/json gives, value and error alike, and the common shapes
// take the fast path.
func TestParseInitializeResultMatchesDecoding(t *testing.T) {
	for _, tc := range initResultCases {
		var r protocol.InitializeResult
		if plain := plainInitializeResult([]byte(tc.raw), &r); plain != tc.plain {
			t.Errorf("plainInitializeResult(%s) = %v, want %v", tc.raw, plain, tc.plain)
		}
		checkInitResult(t, []byte(tc.raw))
	}
}

func checkInitResult(t *testing.T, raw []byte) {
	t.Helper()
	got, err := ParseInitializeResult(raw)
	var want protocol.InitializeResult
	werr := json.Unmarshal(raw, &want)
	if (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Fatalf("ParseInitializeResult(%q): error %v, decoding gives %v", raw, err, werr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseInitializeResult(%q) = %+v, decoding gives %+v", raw, got, want)
	}
}

// FuzzParseInitializeResult: the same for any input.
func FuzzParseInitializeResult(f *testing.F) {
	for _, tc := range initResultCases {
		f.Add([]byte(tc.raw))
	}
	f.Fuzz(checkInitResult)
}
