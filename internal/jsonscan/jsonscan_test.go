package jsonscan_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/internal/jsonscan"
)

// TestEachMemberMatchesEncodingJSON checks that the members EachMember
// reports are exactly the top-level members encoding/json sees, values
// byte for byte.
func TestEachMemberMatchesEncodingJSON(t *testing.T) {
	for _, in := range []string{
		`{}`,
		` { } `,
		`{"a":1}`,
		`{"a" : "x\"y" , "b":[1,{"c":"]"}],"d":{"e":{"f":null}},"g":true,"h":-1.5e3}`,
		`{"k\u0065y":"v","":""}`,
		"{\n\t\"a\"\t:\n[ ] ,\"b\":\"}\"}",
	} {
		var want map[string]json.RawMessage
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatalf("bad test input %s: %v", in, err)
		}
		got := map[string]json.RawMessage{}
		jsonscan.EachMember([]byte(in), func(key, val []byte) bool {
			var k string
			if err := json.Unmarshal(key, &k); err != nil {
				t.Fatalf("EachMember(%s) key %s is not a JSON string", in, key)
			}
			got[k] = append(json.RawMessage(nil), val...)
			return true
		})
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("EachMember(%s) members (-want +got):\n%s", in, diff)
		}
	}
}

func TestEachMemberStops(t *testing.T) {
	n := 0
	jsonscan.EachMember([]byte(`{"a":1,"b":2,"c":3}`), func(key, val []byte) bool {
		n++
		return n < 2
	})
	if n != 2 {
		t.Errorf("EachMember visited %d members after fn returned false at 2, want 2", n)
	}
}

func TestKeyIs(t *testing.T) {
	for _, tc := range []struct {
		quoted, name string
		want         bool
	}{
		{`"name"`, "name", true},
		{`"NAME"`, "name", true},
		{`"n\u0061me"`, "name", true},
		{`"nam"`, "name", false},
		{`"names"`, "name", false},
		{`"\u006e\u0061\u006d\u0065\u006e\u0061\u006d\u0065\u006e\u0061\u006d\u0065"`, "name", false},
	} {
		if got := jsonscan.KeyIs([]byte(tc.quoted), tc.name); got != tc.want {
			t.Errorf("KeyIs(%s, %q) = %v, want %v", tc.quoted, tc.name, got, tc.want)
		}
	}
}
