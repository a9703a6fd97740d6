package protocol_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

// oldResultTypeOf is the former implementation, which decoded the whole
// result with encoding/json, with the spec's reading of a present
// resultType (a non-empty string; null and "" are errors, see
// ResultTypeOf); ResultTypeOf must agree with it.
func oldResultTypeOf(raw json.RawMessage) (string, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return "", fmt.Errorf("protocol: result is not a JSON object")
	}
	var probe struct {
		ResultType json.RawMessage `json:"resultType"` // "null" for null
	}
	if err := json.Unmarshal(trimmed, &probe); err != nil {
		return "", fmt.Errorf("protocol: decoding result: %v", err)
	}
	if probe.ResultType == nil {
		return protocol.ResultTypeComplete, nil
	}
	var s string
	if string(probe.ResultType) == "null" || json.Unmarshal(probe.ResultType, &s) != nil {
		return "", fmt.Errorf("protocol: resultType is not a string")
	}
	if s == "" {
		return "", fmt.Errorf("protocol: resultType is empty")
	}
	return s, nil
}

var resultTypeCases = []string{
	``, ` `, `null`, `[]`, `"x"`, `{`, `{}`, ` {} `, `{} x`, `{}{}`,
	`{"resultType":"task"}`,
	`{"resultType":"input_required","x":1}`,
	`{"resultType":"other"}`,
	`{"resultType":""}`,
	`{"resultType":null}`,
	`{"resultType":5}`,
	`{"resultType":true}`,
	`{"resultType":{"a":"b"}}`,
	`{"resultType":["task"]}`,
	`{"resultType":"task","resultType":"complete"}`,
	`{"resultType":"task","resultType":null}`,
	`{"resultType":null,"resultType":"task"}`,
	`{"resultType":"\u0000"}`,
	`{"resultType":"task","RESULTTYPE":"input_required"}`,
	`{"ResultType":"task"}`,
	`{"re\u0073ultType":"task"}`,
	`{"reſultType":"task"}`,
	`{"re\u017fultType":"task"}`,
	`{"resultType":"ta\u0073k"}`,
	`{"resultType":"t\"ask"}`,
	`{"resultType":"\ud800"}`,
	"{\"resultType\":\"\xff\"}",
	"{\"resultType\xff\":\"task\"}",
	`{"a":{"resultType":"task"},"b":[{"resultType":"x"}]}`,
	`{"a":"\"resultType\":\"task\"","resultType":"complete"}`,
	`{"a":"}","resultType":"task"}`,
	`{"a":"\\","resultType":"task"}`,
	`{ "content" : [ ] , "resultType" : "task" , "n" : -1.5e3 }`,
	"{\n\t\"resultType\"\r\n:\n\"task\"\n}",
	`{"a":1,"resultType":"task",}`,
	`{"a":1 "resultType":"task"}`,
	`{"resultType":"task"`,
	`{"resultType":tru}`,
	`{"resultType":"task"}]`,
}

func checkResultTypeOf(t *testing.T, in string) {
	t.Helper()
	got, err := protocol.ResultTypeOf(json.RawMessage(in))
	want, werr := oldResultTypeOf(json.RawMessage(in))
	if got != want || (err == nil) != (werr == nil) || err != nil && err.Error() != werr.Error() {
		t.Errorf("ResultTypeOf(%q) = %q, %v; the decoding implementation gives %q, %v", in, got, err, want, werr)
	}
}

func TestResultTypeOfMatchesDecoding(t *testing.T) {
	for _, in := range resultTypeCases {
		checkResultTypeOf(t, in)
	}
}

func FuzzResultTypeOfMatchesDecoding(f *testing.F) {
	for _, in := range resultTypeCases {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in string) { checkResultTypeOf(t, in) })
}

func TestResultTypeOfAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, in := range []string{
		`{"content":[{"type":"text","text":"3"}],"structuredContent":{"resultType":"x"},"isError":false}`,
		`{"content":[{"type":"text","text":"3"}],"resultType":"complete"}`,
		`{"resultType":"task","task":{"taskId":"t1","status":"working"}}`,
		`{"resultType":"input_required","inputRequests":{}}`,
	} {
		raw := json.RawMessage(in)
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := protocol.ResultTypeOf(raw); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("ResultTypeOf(%s): %v allocs, want 0", in, allocs)
		}
	}
}

func TestTextAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	r := protocol.CallToolResult{Content: []protocol.Content{{Type: protocol.ContentText, Text: "only"}}}
	allocs := testing.AllocsPerRun(100, func() {
		if r.Text() != "only" {
			t.Fatal("wrong text")
		}
	})
	if allocs != 0 {
		t.Errorf("Text of a single block: %v allocs, want 0", allocs)
	}
}

func BenchmarkResultTypeOf(b *testing.B) {
	raw := json.RawMessage(`{"content":[{"type":"text","text":"3"}],"structuredContent":{"sum":3},"resultType":"complete"}`)
	for _, impl := range []struct {
		name string
		f    func(json.RawMessage) (string, error)
	}{{"scan", protocol.ResultTypeOf}, {"decoding", oldResultTypeOf}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := impl.f(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
