package negotiation

import (
	"encoding/json"
	"reflect"
	"testing"

	"fmt"
	"github.com/conduitmcp/conduit/protocol"
	"time"
)

// TestPlainCapabilitiesMatchesDecoding: what the capabilities fast path
// reads equals what encoding/json decodes, and the common shapes take it.
func TestPlainCapabilitiesMatchesDecoding(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		plain bool // the fast path reads it
	}{
		{`{}`, true},
		{`{"tools":{}}`, true},
		{`{"tools":{"listChanged":true},"logging":{},"completions":{}}`, true},
		{`{ "prompts" : { "listChanged" : false } , "resources":{"subscribe":true,"listChanged":true}}`, true},
		{`{"tools":{"listChanged":true,"other":[1,{"a":2}]}}`, true},
		{`{"tools":{"listChanged":true},"tools":{}}`, true}, // the duplicate decodes into the first
		{`{"tools":{"listChanged":true},"tools":{"listChanged":false}}`, true},
		{`{"logging":{"x":1}}`, true},
		{`{"tools":{"subscribe":true}}`, false},
		{`{"tools":{"ListChanged":true}}`, false},
		{`{"tools":{"list\u0043hanged":true}}`, false},
		{`{"tools":{"listChanged":null}}`, false},
		{`{"Tools":{"listChanged":true}}`, false},
		{`{"tools":null}`, false},
		{`{"experimental":{"e":1},"tools":{}}`, false},
		{`{"tasks":{"list":{}}}`, false},
		{`{"extensions":{"x":{}}}`, false},
		{`{"unknown":{}}`, false},
	} {
		var got protocol.ServerCapabilities
		plain := plainCapabilities([]byte(tc.raw), &got)
		if plain != tc.plain {
			t.Errorf("plainCapabilities(%s) = %v, want %v", tc.raw, plain, tc.plain)
		}
		if !plain {
			if !reflect.DeepEqual(got, protocol.ServerCapabilities{}) {
				t.Errorf("plainCapabilities(%s) left %+v behind", tc.raw, got)
			}
			continue
		}
		var want protocol.ServerCapabilities
		if err := json.Unmarshal([]byte(tc.raw), &want); err != nil {
			t.Fatalf("decoding %s: %v", tc.raw, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("plainCapabilities(%s) = %+v, decoding gives %+v", tc.raw, got, want)
		}
	}
}

// TestPlainImplementationMatchesDecoding: the same for serverInfo.
func TestPlainImplementationMatchesDecoding(t *testing.T) {
	for _, tc := range []struct {
		raw   string
		plain bool
	}{
		{`{"name":"S","version":"1"}`, true},
		{`{ "name" : "S" , "version" : "1" , "title" : "T" }`, true},
		{`{"name":"A","version":"1","name":"B"}`, true},
		{`{"name":"","version":""}`, true},
		{`{"name":"S\u00e9","version":"1"}`, false},
		{`{"Name":"S","version":"1"}`, false},
		{`{"name":"S","version":"1","icons":[]}`, false},
		{`{"name":"S","version":"1","description":"d"}`, false},
		{"{\"name\":\"\xff\",\"version\":\"1\"}", false},
	} {
		got := plainImplementation([]byte(tc.raw))
		if (got != nil) != tc.plain {
			t.Errorf("plainImplementation(%s) = %+v, want plain %v", tc.raw, got, tc.plain)
		}
		if got == nil {
			continue
		}
		var want protocol.Implementation
		if err := json.Unmarshal([]byte(tc.raw), &want); err != nil {
			t.Fatalf("decoding %s: %v", tc.raw, err)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Errorf("plainImplementation(%s) = %+v, decoding gives %+v", tc.raw, *got, want)
		}
	}
}

// TestIsDateAsTimeParse: isDate accepts exactly the ten-byte strings
// time.Parse(time.DateOnly, s) accepts: every day of 1999–2401 (leap
// years by every rule), the day after each month's last, and malformed
// strings.
func TestIsDateAsTimeParse(t *testing.T) {
	check := func(s string) {
		t.Helper()
		_, err := time.Parse(time.DateOnly, s)
		if got := isDate(s); got != (err == nil) {
			t.Errorf("isDate(%q) = %v, time.Parse says %v", s, got, err)
		}
	}
	for d := time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() < 2402; d = d.AddDate(0, 0, 1) {
		check(d.Format(time.DateOnly))
		if d.AddDate(0, 0, 1).Day() == 1 { // d is a month's last day
			check(fmt.Sprintf("%04d-%02d-%02d", d.Year(), int(d.Month()), d.Day()+1))
		}
	}
	for _, s := range []string{"2026-00-10", "2026-13-01", "2026-01-00", "2026-01-32", "2026-1-010", "2026/07/28", "20260-7-28", "2026-07-2x",
		"x026-07-28", "2026-07-28", "0000-01-01", "9999-12-31", "2026-02-29", "2028-02-29", "2100-02-29", "2000-02-29", "+026-07-28", "2026-07-+8", " 026-07-28"} {
		check(s)
	}
}
