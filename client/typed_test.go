package client_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/handler"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
)

type sum struct {
	Sum float64 `json:"sum"`
}

type weather struct {
	Temperature float64 `json:"temperature"`
	Conditions  string  `json:"conditions"`
}

func TestCallToolAs(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p))
		ctx := testCtx(t)
		got, res, err := client.CallToolAs[sum](ctx, f.c, "add", map[string]any{"a": 1.5, "b": 2})
		if err != nil || res == nil {
			t.Fatalf("CallToolAs[sum](add) = %v, %v, %v", got, res, err)
		}
		if diff := cmp.Diff(sum{Sum: 3.5}, got); diff != "" {
			t.Errorf("CallToolAs[sum](add) (-want +got):\n%s", diff)
		}
		w, _, err := client.CallToolAs[weather](ctx, f.c, "structured", map[string]any{"city": "Paris"})
		if err != nil || w.Conditions == "" {
			t.Errorf("CallToolAs[weather](structured) = %+v, %v", w, err)
		}
		_, _, err = client.CallToolAs[sum](ctx, f.c, "nope", nil)
		if ce, ok := errors.AsType[*client.Error](err); !ok || ce.Kind != client.KindInvalid || ce.Op != "tools/call" ||
			!strings.Contains(err.Error(), `unknown tool "nope"`) {
			t.Errorf("CallToolAs(nope) error = %v, want an *Error of kind invalid naming the tool", err)
		}
		_, res, err = client.CallToolAs[sum](ctx, f.c, "fail", nil)
		var failed *client.Error
		if !errors.As(err, &failed) || failed.Kind != client.KindServer || res == nil || !res.Failed() ||
			!strings.Contains(err.Error(), `tool "fail" reported an error`) {
			t.Errorf("CallToolAs(fail) = %v, %v; want a KindServer *Error with the failed result", res, err)
		}
	})
}

// TestCallToolAsValidation runs on the in-memory transport: the results
// are forged with FaultResult.
func TestCallToolAsValidation(t *testing.T) {
	tests := []struct {
		name    string
		tool    string
		result  string
		want    any
		wantErr bool
	}{
		{"decodes", "add", `{"content":[],"structuredContent":{"sum":7}}`, sum{Sum: 7}, false},
		{"fails validation", "add", `{"content":[],"structuredContent":{"sum":"seven"}}`, sum{}, true},
		{"missing required", "add", `{"content":[],"structuredContent":{}}`, sum{}, true},
		{"no structured content", "add", `{"content":[{"type":"text","text":"seven"}]}`, sum{}, true},
		{"text fallback", "add", `{"content":[{"type":"text","text":"{\"sum\":8}"}]}`, sum{Sum: 8}, false},
		{"schema absent decodes", "echo", `{"content":[],"structuredContent":{"sum":"anything"}}`, map[string]any{"sum": "anything"}, false},
	}
	for _, era := range allEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p))
				f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultResult, Method: "tools/call", Result: json.RawMessage(tt.result)})
				ctx := testCtx(t)
				var got any
				var err error
				if tt.tool == "echo" {
					got, _, err = client.CallToolAs[map[string]any](ctx, f.c, tt.tool, map[string]any{"text": "x"})
				} else {
					got, _, err = client.CallToolAs[sum](ctx, f.c, tt.tool, map[string]any{"a": 1, "b": 2})
				}
				var ve *handler.ValidationError
				if tt.wantErr != errors.As(err, &ve) {
					t.Fatalf("CallToolAs error = %v, want *ValidationError: %v", err, tt.wantErr)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("CallToolAs value (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestCallToolAsToolGone: a tool left out of a later complete listing
// (a server that sends no list_changed) is missing from the list:
// CallToolAs refuses it as unknown and does not call it, rather than
// trusting the metadata of a listing the server has since replaced.
func TestCallToolAsToolGone(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p))
			drainTools(t, f.c) // add is listed
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
				Result: json.RawMessage(`{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}`)})
			drainTools(t, f.c) // add is gone
			_, _, err := client.CallToolAs[sum](testCtx(t), f.c, "add", map[string]any{"a": 1, "b": 2})
			if ce, ok := errors.AsType[*client.Error](err); !ok || ce.Kind != client.KindInvalid {
				t.Errorf("CallToolAs(add) after a listing without it: error = %v, want an *Error of kind invalid", err)
			}
			if n := f.srv.Executions("add"); n != 0 {
				t.Errorf("add ran %d times, want 0", n)
			}
		})
	}
}

// TestCallToolAsHugeOutputSchema: an outputSchema nested very deep, or
// very large, is refused with a *handler.ValidationError before the
// schema compiler sees it (whose time grows with the cube of the nesting
// and the square of the size: either kept CallToolAs busy for minutes),
// and the tool is not called.
func TestCallToolAsHugeOutputSchema(t *testing.T) {
	for name, schema := range map[string]string{
		"deep": strings.Repeat(`{"not":`, 3000) + `{}` + strings.Repeat(`}`, 3000),
		"wide": `{"anyOf":[` + strings.Repeat(`{},`, 60000) + `{}]}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
				Result: json.RawMessage(`{"tools":[{"name":"add","inputSchema":{"type":"object"},"outputSchema":` + schema + `}]}`)})
			done := make(chan error, 1)
			go func() {
				_, _, err := client.CallToolAs[sum](testCtx(t), f.c, "add", map[string]any{"a": 1, "b": 2})
				done <- err
			}()
			select {
			case err := <-done:
				var ve *handler.ValidationError
				if !errors.As(err, &ve) {
					t.Errorf("CallToolAs = %v, want a *handler.ValidationError", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("CallToolAs has not returned after 10 s")
			}
			if n := f.srv.Executions("add"); n != 0 {
				t.Errorf("add ran %d times, want 0", n)
			}
		})
	}
}

// TestCallToolAsHugeNumbers: a number with an exponent past what
// math/big parses (1e1000001) in structuredContent made the schema
// validator dereference a nil *big.Rat and panic; numbers with huge
// exponents (1e999999, 25 ms each to parse) in structuredContent or in
// the outputSchema kept CallToolAs busy for minutes. Each is refused
// with a *handler.ValidationError.
func TestCallToolAsHugeNumbers(t *testing.T) {
	many := func(lit string, n int) string { return strings.Repeat(lit+",", n-1) + lit }
	tests := []struct {
		name, schema, structured string
	}{
		{"past big.Rat", `{"type":"object","properties":{"n":{"minimum":0}}}`, `{"n":1e1000001}`},
		{"past big.Rat unique", `{"type":"object","properties":{"n":{"uniqueItems":true}}}`, `{"n":[` + many("1e1000001", 30) + `]}`},
		{"exponents in the result", `{"type":"object","properties":{"n":{"items":{"type":"integer","minimum":0}}}}`,
			`{"n":[` + many("1e999999", 2000) + `]}`},
		{"digits in the result", `{"type":"object","properties":{"n":{"minimum":0}}}`, `{"n":` + strings.Repeat("7", 3<<20) + `}`},
		{"exponents in the schema", `{"type":"object","properties":{"n":{"prefixItems":[` + many(`{"minimum":1e999999}`, 2000) + `]}}}`, `{"n":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
			f.srv.SetFaults(
				testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
					Result: json.RawMessage(`{"tools":[{"name":"add","inputSchema":{"type":"object"},"outputSchema":` + tt.schema + `}]}`)},
				testserver.Fault{Kind: testserver.FaultResult, Method: "tools/call",
					Result: json.RawMessage(`{"content":[],"structuredContent":` + tt.structured + `}`)})
			done := make(chan error, 1)
			go func() {
				_, _, err := client.CallToolAs[map[string]json.RawMessage](testCtx(t), f.c, "add", map[string]any{"a": 1, "b": 2})
				done <- err
			}()
			select {
			case err := <-done:
				var ve *handler.ValidationError
				if !errors.As(err, &ve) {
					t.Errorf("CallToolAs = %v, want a *handler.ValidationError", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("CallToolAs has not returned after 10 s")
			}
		})
	}
}

// TestCallToolAsCostlySchema: an outputSchema of two kilobytes whose
// in-place applicators fork and join again, forty times over, makes the
// validator evaluate its last subschema 2^40 times (CallToolAs was busy
// for days); so does one that forks at every level of a forty-deep
// structuredContent. Each is refused with a *handler.ValidationError,
// as is one whose $refs form a cycle, a result of three thousand
// numbers checked against an enum of eleven thousand (9 ms each), and a
// megabyte string matched against "(.*a){1000}b" (30 s); recursive
// schemas of ordinary shape still validate deep results, and cheap
// patterns long strings.
func TestCallToolAsCostlySchema(t *testing.T) {
	var chain []string
	for i := range 40 {
		chain = append(chain, fmt.Sprintf(`"a%d":{"anyOf":[{"$ref":"#/$defs/a%d"},{"$ref":"#/$defs/a%d"}]}`, i, i+1, i+1))
	}
	chain = append(chain, `"a40":false`)
	deep := func(open, leaf, end string, n int) string {
		return strings.Repeat(open, n) + leaf + strings.Repeat(end, n)
	}
	enum := func(n int) string {
		var vals []string
		for i := range n {
			vals = append(vals, strconv.Itoa(i+1))
		}
		return `{"type":"object","properties":{"n":{"items":{"enum":[` + strings.Join(vals, ",") + `]}}}}`
	}
	tests := []struct {
		name, schema, structured string
		ok                       bool
	}{
		{"forks in place", `{"type":"object","properties":{"n":{"$ref":"#/$defs/a0"}},"$defs":{` + strings.Join(chain, ",") + `}}`, `{"n":1}`, false},
		{"forks across values", `{"type":"object","properties":{"n":{"$ref":"#/$defs/n"}},"$defs":{"n":{"anyOf":[{"type":"array","items":{"$ref":"#/$defs/n"}},{"type":"array","items":{"$ref":"#/$defs/n"}}]}}}`,
			`{"n":` + deep("[", "1", "]", 40) + `}`, false},
		{"ref cycle", `{"type":"object","properties":{"n":{"$ref":"#/$defs/a"}},"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"allOf":[{"$ref":"#/$defs/a"}]}}}`, `{"n":1}`, false},
		{"long enum", enum(11000), `{"n":[` + strings.Repeat("0,", 3000) + `0]}`, false},
		{"short enum", enum(50), `{"n":[` + strings.Repeat("7,", 3000) + `7]}`, true},
		{"costly pattern", `{"type":"object","properties":{"n":{"pattern":"(.*a){1000}b"}}}`, `{"n":"` + strings.Repeat("a", 1<<20) + `"}`, false},
		{"cheap pattern", `{"type":"object","properties":{"n":{"pattern":"^a*$"}}}`, `{"n":"` + strings.Repeat("a", 1<<20) + `"}`, true},
		{"tree", `{"type":"object","properties":{"name":{"type":"string"},"kids":{"type":"array","items":{"$ref":"#"}}}}`,
			deep(`{"name":"x","kids":[`, `{"name":"leaf"}`, `]}`, 40), true},
		{"any JSON value", `{"type":"object","properties":{"n":{"$ref":"#/$defs/v"}},"$defs":{"v":{"anyOf":[{"type":"object","additionalProperties":{"$ref":"#/$defs/v"}},{"type":"array","items":{"$ref":"#/$defs/v"}},{"type":["string","number","boolean","null"]}]}}}`,
			`{"n":` + deep(`{"a":[`, "1", `]}`, 40) + `}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
			f.srv.SetFaults(
				testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
					Result: json.RawMessage(`{"tools":[{"name":"add","inputSchema":{"type":"object"},"outputSchema":` + tt.schema + `}]}`)},
				testserver.Fault{Kind: testserver.FaultResult, Method: "tools/call",
					Result: json.RawMessage(`{"content":[],"structuredContent":` + tt.structured + `}`)})
			done := make(chan error, 1)
			go func() {
				_, _, err := client.CallToolAs[map[string]json.RawMessage](testCtx(t), f.c, "add", map[string]any{"a": 1, "b": 2})
				done <- err
			}()
			select {
			case err := <-done:
				var ve *handler.ValidationError
				if tt.ok && err != nil {
					t.Errorf("CallToolAs = %v, want success", err)
				}
				if !tt.ok && !errors.As(err, &ve) {
					t.Errorf("CallToolAs = %v, want a *handler.ValidationError", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("CallToolAs has not returned after 10 s")
			}
		})
	}
}
