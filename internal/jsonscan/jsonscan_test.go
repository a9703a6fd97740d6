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

func TestMember(t *testing.T) {
	for _, tc := range []struct {
		in, name, want string
		found, bad     bool
	}{
		{`{"_meta":{"a":1},"x":2}`, "_meta", `{"a":1}`, true, false},
		{` {"x":"_meta","_meta" : [] } `, "_meta", `[]`, true, false},
		{`{"_META":{}}`, "_meta", ``, false, false}, // raw, exact comparison
		{`{"a":{"_meta":1}}`, "_meta", ``, false, false},
		{`{}`, "_meta", ``, false, false},
		{`{"a":tru,"_meta":{}}`, "_meta", ``, false, true},
		{`[]`, "_meta", ``, false, true},
		{`{"a":1`, "_meta", ``, false, true},
	} {
		v, found, err := jsonscan.Member([]byte(tc.in), tc.name)
		got := ""
		if found {
			got = string(v.Raw([]byte(tc.in)))
		}
		if got != tc.want || found != tc.found || (err != nil) != tc.bad {
			t.Errorf("Member(%s, %q) = %s, %v, %v; want %s, %v, bad %v", tc.in, tc.name, got, found, err, tc.want, tc.found, tc.bad)
		}
	}
}

// TestLastMemberFold checks the member encoding/json would decode into a
// field named name.
func TestLastMemberFold(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{`{"resultType":"a","resulttype":"b"}`, `"b"`, false},
		{`{"RESULTTYPE":"a","x":{"resultType":1}}`, `"a"`, false},
		{`{"re\u0073ultType":null}`, `null`, false},
		{`{"other":1}`, ``, false},
		{`{"resultType":1} x`, ``, true},
		{`{"resultType":1,}`, ``, true},
	} {
		v, err := jsonscan.LastMemberFold([]byte(tc.in), "resultType")
		got := ""
		if v.Kind != jsonscan.KindAbsent {
			got = string(v.Raw([]byte(tc.in)))
		}
		if got != tc.want || (err != nil) != tc.bad {
			t.Errorf("LastMemberFold(%s) = %s, %v; want %s, bad %v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}
