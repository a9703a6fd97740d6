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

// TestResultNotesBounded: the notes that stand for content the model does
// not get (resource links, audio, blocks of unknown types) hold strings of
// the server; a long description, many links or a long type name stay
// within the text bound (they went to the model whole: a megabyte past a
// 64 KiB bound), and the result says it was cut.
func TestResultNotesBounded(t *testing.T) {
	big := strings.Repeat("d", 1<<20)
	many := make([]protocol.Content, 20000)
	for i := range many {
		many[i] = protocol.ResourceLinkContent(protocol.Resource{URI: fmt.Sprintf("file:///%d", i), Name: strings.Repeat("n", 100)})
	}
	for _, tc := range []struct {
		name    string
		content []protocol.Content
	}{
		{"long description", []protocol.Content{protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a", Name: "a", Description: big})}},
		{"long uri", []protocol.Content{protocol.ResourceLinkContent(protocol.Resource{URI: "file:///" + big, Name: "a"})}},
		{"many links", many},
		{"long type", []protocol.Content{{Type: big}}},
		{"long mime type", []protocol.Content{protocol.AudioContent("AAAA", big)}},
		{"long resource uri", []protocol.Content{protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: big, MIMEType: "application/zip", Blob: "AAAA"})}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := (&toolset.Set{}).Result("t", &protocol.CallToolResult{Content: tc.content})
			// The text bound, once more for the notes, and the note on what was cut.
			if n, max := len(r.Text()), 2*toolset.DefaultMaxTextBytes+200; n > max {
				t.Errorf("len(Result.Text()) = %d, want at most %d", n, max)
			}
			if !r.Truncated {
				t.Errorf("Result.Truncated = false, want true")
			}
		})
	}
}
