package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// within runs f and fails the test when it has not returned after d: a
// peer's input must not make the package spin. f keeps running after a
// failure, until the test binary exits.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// jsonList returns n strings made by name as a JSON array.
func jsonList(n int, name func(i int) string) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%q", name(i))
	}
	b.WriteByte(']')
	return b.String()
}

// TestLongListsLinear: a server's required list and type list of 100,000
// strings (under a megabyte) convert, and a call through the tool runs,
// in linear time; each list was deduplicated in quadratic time, minutes
// of CPU per dialect.
func TestLongListsLinear(t *testing.T) {
	names := jsonList(100000, func(i int) string { return fmt.Sprintf("r%d", i) })
	for _, tc := range []struct{ name, schema string }{
		{"required", `{"type":"object","properties":{"a":{"type":"string"}},"required":` + names + `}`},
		{"type", `{"type":"object","properties":{"a":{"type":` + names + `}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := protocol.Tool{Name: "t", InputSchema: json.RawMessage(tc.schema)}
			for _, d := range allDialects {
				within(t, 10*time.Second, fmt.Sprintf("Convert(%v)", d), func() {
					if _, err := toolset.Convert(toolset.Tool{Name: "t", Tool: tool}, d); err != nil && !errors.Is(err, toolset.ErrSchemaTooLarge) {
						t.Errorf("Convert(%v) = %v", d, err)
					}
				})
			}
			set := newSet(t, []protocol.Tool{tool})
			within(t, 10*time.Second, "Call", func() {
				if _, err := set.Call(context.Background(), "t", `{"a":null}`); err != nil {
					t.Errorf("Call = %v", err)
				}
			})
		})
	}
}
