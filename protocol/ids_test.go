package protocol_test

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

func TestProgressTokenJSON(t *testing.T) {
	tests := []struct {
		in      string
		want    protocol.ProgressToken
		wantErr bool
	}{
		{`"abc"`, protocol.StringProgressToken("abc"), false},
		{`""`, protocol.StringProgressToken(""), false},
		{`7`, protocol.IntProgressToken(7), false},
		{`-9007199254740991`, protocol.IntProgressToken(-9007199254740991), false},
		{`"7"`, protocol.StringProgressToken("7"), false},
		{`null`, protocol.ProgressToken{}, false},
		{`1.5`, protocol.ProgressToken{}, true},
		{`1e3`, protocol.ProgressToken{}, true},
		{`true`, protocol.ProgressToken{}, true},
		{`{}`, protocol.ProgressToken{}, true},
		{`99999999999999999999`, protocol.ProgressToken{}, true},
	}
	for _, tc := range tests {
		var got protocol.ProgressToken
		err := json.Unmarshal([]byte(tc.in), &got)
		if (err != nil) != tc.wantErr {
			t.Errorf("Unmarshal(%s) error = %v, wantErr %v", tc.in, err, tc.wantErr)
			continue
		}
		if err != nil {
			continue
		}
		if got != tc.want {
			t.Errorf("Unmarshal(%s) = %v, want %v", tc.in, got, tc.want)
		}
		if tc.in == "null" {
			continue
		}
		out, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if string(out) != tc.in {
			t.Errorf("Marshal(Unmarshal(%s)) = %s", tc.in, out)
		}
	}
}

func TestIDsKeepKindApart(t *testing.T) {
	if protocol.IntProgressToken(1) == protocol.StringProgressToken("1") {
		t.Error(`IntProgressToken(1) == StringProgressToken("1"), want different`)
	}
	if protocol.IntRequestID(1) == protocol.StringRequestID("1") {
		t.Error(`IntRequestID(1) == StringRequestID("1"), want different`)
	}
	// Usable as map keys.
	m := map[protocol.ProgressToken]int{protocol.IntProgressToken(1): 1, protocol.StringProgressToken("1"): 2}
	if len(m) != 2 {
		t.Errorf("map has %d keys, want 2", len(m))
	}
	id := protocol.IntRequestID(42)
	if n, ok := id.Int64(); !ok || n != 42 {
		t.Errorf("Int64() = %d, %v, want 42, true", n, ok)
	}
	if _, ok := id.Str(); ok {
		t.Error("Str() ok on an integer id")
	}
	if got := id.Raw(); got != int64(42) {
		t.Errorf("Raw() = %#v, want int64(42)", got)
	}
	if got := protocol.StringRequestID("x").String(); got != `"x"` {
		t.Errorf("String() = %s, want \"x\"", got)
	}
	var zero protocol.RequestID
	if zero.IsValid() || !zero.IsZero() || zero.Raw() != nil {
		t.Errorf("zero RequestID: IsValid %v IsZero %v Raw %v", zero.IsValid(), zero.IsZero(), zero.Raw())
	}
}

func TestCancelledAndProgressAccessors(t *testing.T) {
	tests := []struct {
		in      string
		want    protocol.RequestID
		wantErr bool
	}{
		{`{"requestId":"123"}`, protocol.StringRequestID("123"), false},
		{`{"requestId":123}`, protocol.IntRequestID(123), false},
		{`{}`, protocol.RequestID{}, false},
		{`{"requestId":[1]}`, protocol.RequestID{}, true},
	}
	for _, tc := range tests {
		var p protocol.CancelledParams
		if err := json.Unmarshal([]byte(tc.in), &p); err != nil {
			t.Fatal(err)
		}
		got, err := p.ID()
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ID() of %s = %v, %v; want %v, wantErr %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
	var pp protocol.ProgressParams
	if err := json.Unmarshal([]byte(`{"progressToken":5,"progress":0.25}`), &pp); err != nil {
		t.Fatal(err)
	}
	if tok, err := pp.Token(); err != nil || tok != protocol.IntProgressToken(5) {
		t.Errorf("Token() = %v, %v; want 5, nil", tok, err)
	}
}

func TestResultTypeOf(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{`{"content":[]}`, protocol.ResultTypeComplete, false},
		{`{"resultType":"complete"}`, protocol.ResultTypeComplete, false},
		{` {"resultType":"input_required","requestState":"x"}`, protocol.ResultTypeInputRequired, false},
		{`{"resultType":"task","taskId":"t"}`, protocol.ResultTypeTask, false},
		{`{"resultType":"something_new"}`, "something_new", false},
		{`{"resultType":5}`, "", true},
		{`{"resultType":null}`, "", true},
		{`{"resultType":""}`, "", true},
		{`[]`, "", true},
		{``, "", true},
		{`{"resultType":`, "", true},
	}
	for _, tc := range tests {
		got, err := protocol.ResultTypeOf(json.RawMessage(tc.in))
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ResultTypeOf(%s) = %q, %v; want %q, wantErr %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
