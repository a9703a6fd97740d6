package transport_test

import (
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// oldNameHeader is the former nameHeader, which decoded params with
// encoding/json; NameHeader must agree with it.
func oldNameHeader(method string, params json.RawMessage) (string, bool) {
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet, protocol.MethodResourcesRead,
		protocol.MethodTasksGet, protocol.MethodTasksUpdate, protocol.MethodTasksCancel:
	default:
		return "", false
	}
	var p struct {
		Name   *string `json:"name"`
		URI    *string `json:"uri"`
		TaskID *string `json:"taskId"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil {
		return "", false
	}
	var v *string
	switch method {
	case protocol.MethodToolsCall, protocol.MethodPromptsGet:
		v = p.Name
	case protocol.MethodResourcesRead:
		v = p.URI
	default:
		v = p.TaskID
	}
	if v == nil {
		return "", false
	}
	s, err := transport.EncodeHeaderValue(*v)
	return s, err == nil
}

var nameHeaderMethods = []string{protocol.MethodToolsCall, protocol.MethodResourcesRead, protocol.MethodTasksGet, "tools/list"}

var nameHeaderCases = []string{
	``, ` `, `null`, `[]`, `"x"`, `{`, `{}`, `{} x`,
	`{"name":"add","arguments":{"name":"x"}}`,
	` {"arguments":{"name":"x","uri":"y"},"name":"add"} `,
	`{"name":"add","name":"sub"}`,
	`{"name":"add","name":null}`,
	`{"name":null,"name":"add"}`,
	`{"NAME":"add"}`,
	`{"n\u0061me":"add"}`,
	`{"name":"a\u00e9"}`,
	`{"name":"tab\there"}`,
	`{"name":" padded "}`,
	`{"name":"=?base64?x?="}`,
	"{\"name\":\"\xff\"}",
	`{"name":"\ud800"}`,
	`{"name":5}`,
	`{"name":"add","uri":5}`,
	`{"name":"add","taskId":{}}`,
	`{"name":"add","other":5}`,
	`{"uri":"file:///a b","taskId":"t1"}`,
	`{"taskId":"t1","TASKID":"t2"}`,
	`{"taſkId":"t3"}`,
	`{"tas\u212aId":"t4"}`,
	`{"name":"a\"b","x":"}"}`,
	`{"name":"add",}`,
	`{"name":"add"`,
}

func checkNameHeader(t *testing.T, method, in string) {
	t.Helper()
	got, ok := transport.NameHeader(method, json.RawMessage(in))
	want, wok := oldNameHeader(method, json.RawMessage(in))
	if got != want || ok != wok {
		t.Errorf("nameHeader(%s, %q) = %q, %v; the decoding implementation gives %q, %v", method, in, got, ok, want, wok)
	}
}

func TestNameHeaderMatchesDecoding(t *testing.T) {
	for _, m := range nameHeaderMethods {
		for _, in := range nameHeaderCases {
			checkNameHeader(t, m, in)
		}
	}
}

func FuzzNameHeaderMatchesDecoding(f *testing.F) {
	for i, in := range nameHeaderCases {
		f.Add(uint8(i), in)
	}
	f.Fuzz(func(t *testing.T, m uint8, in string) {
		checkNameHeader(t, nameHeaderMethods[int(m)%len(nameHeaderMethods)], in)
	})
}

func TestNameHeaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	params := json.RawMessage(`{"name":"add","arguments":{"a":1,"b":{"name":"x"}},"_meta":{"progressToken":1}}`)
	allocs := testing.AllocsPerRun(100, func() {
		if s, ok := transport.NameHeader(protocol.MethodToolsCall, params); !ok || s != "add" {
			t.Fatalf("NameHeader = %q, %v", s, ok)
		}
	})
	if allocs > 1 { // the returned string
		t.Errorf("NameHeader: %v allocs, want at most 1", allocs)
	}
}

func BenchmarkNameHeader(b *testing.B) {
	params := json.RawMessage(`{"name":"add","arguments":{"a":1,"b":2},"_meta":{"progressToken":1}}`)
	for _, impl := range []struct {
		name string
		f    func(string, json.RawMessage) (string, bool)
	}{{"scan", transport.NameHeader}, {"decoding", oldNameHeader}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, ok := impl.f(protocol.MethodToolsCall, params); !ok {
					b.Fatal("no name")
				}
			}
		})
	}
}
