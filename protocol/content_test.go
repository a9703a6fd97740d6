package protocol_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/protocol"
)

func TestContentConstructorsEncode(t *testing.T) {
	size := int64(12)
	tests := []struct {
		name string
		c    protocol.Content
		want string
	}{
		{"text", protocol.TextContent("hi"), `{"type":"text","text":"hi"}`},
		{"empty text keeps text", protocol.TextContent(""), `{"type":"text","text":""}`},
		{"image", protocol.ImageContent("AAAA", "image/png"), `{"type":"image","data":"AAAA","mimeType":"image/png"}`},
		{"empty audio keeps data and mimeType", protocol.AudioContent("", ""), `{"type":"audio","data":"","mimeType":""}`},
		{"resource link", protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a", Name: "a", Size: &size}),
			`{"type":"resource_link","uri":"file:///a","name":"a","size":12}`},
		{"embedded empty text resource", protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///a"}),
			`{"type":"resource","resource":{"uri":"file:///a","text":""}}`},
		{"embedded blob", protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///a", Blob: "AAAA"}),
			`{"type":"resource","resource":{"uri":"file:///a","blob":"AAAA"}}`},
		{"tool use without input", protocol.ToolUseContent("c1", "f", nil), `{"type":"tool_use","input":{},"id":"c1","name":"f"}`},
		{"tool result without content", protocol.ToolResultContent("c1"), `{"type":"tool_result","content":[],"toolUseId":"c1"}`},
		{"tool result", protocol.ToolResultContent("c1", protocol.TextContent("ok")), `{"type":"tool_result","toolUseId":"c1","content":[{"type":"text","text":"ok"}]}`},
		{"nested tool result beside members that hold a content key", protocol.Content{Type: protocol.ContentToolResult, ToolUseID: "c1",
			Content: []protocol.Content{protocol.ToolUseContent("c2", "f", json.RawMessage(`{"content":[1]}`)), protocol.ToolResultContent("c3")},
			Meta:    protocol.Meta{"content": json.RawMessage(`0`)}},
			`{"type":"tool_result","toolUseId":"c1","content":[{"type":"tool_use","name":"f","id":"c2","input":{"content":[1]}},` +
				`{"type":"tool_result","content":[],"toolUseId":"c3"}],"_meta":{"content":0}}`},
		{"unknown type round-trips common fields", protocol.Content{Type: "future", Text: "x"}, `{"type":"future","text":"x"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := json.Marshal(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			if d := jsonDiff(t, []byte(tc.want), got); d != "" {
				t.Errorf("Marshal = %s, want %s (-want +got):\n%s", got, tc.want, d)
			}
			// The encoding decodes back to the same block.
			var back protocol.Content
			if err := json.Unmarshal(got, &back); err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(back)
			if err != nil {
				t.Fatal(err)
			}
			if d := jsonDiff(t, got, again); d != "" {
				t.Errorf("second round trip differs (-first +second):\n%s", d)
			}
		})
	}
}

func TestText(t *testing.T) {
	tests := []struct {
		name string
		cs   []protocol.Content
		want string
	}{
		{"none", nil, ""},
		{"one", []protocol.Content{protocol.TextContent("a")}, "a"},
		{"skips other blocks", []protocol.Content{
			protocol.TextContent("a"), protocol.ImageContent("AA", "image/png"), protocol.TextContent("b"),
		}, "a\nb"},
		{"keeps empty texts", []protocol.Content{protocol.TextContent(""), protocol.TextContent("b")}, "\nb"},
		{"only non-text", []protocol.Content{protocol.AudioContent("AA", "audio/wav")}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := protocol.Text(tc.cs); got != tc.want {
				t.Errorf("Text(%v) = %q, want %q", tc.cs, got, tc.want)
			}
			r := protocol.CallToolResult{Content: tc.cs}
			if got := r.Text(); got != tc.want {
				t.Errorf("CallToolResult.Text() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestCallToolResultFailed(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{`{"content":[]}`, false},
		{`{"content":[],"isError":false}`, false},
		{`{"content":[],"isError":true}`, true},
	}
	for _, tc := range tests {
		var r protocol.CallToolResult
		if err := json.Unmarshal([]byte(tc.in), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.Failed(); got != tc.want {
			t.Errorf("Failed() of %s = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestGetPromptResultText(t *testing.T) {
	r := protocol.GetPromptResult{Messages: []protocol.PromptMessage{
		{Role: protocol.RoleUser, Content: protocol.TextContent("review this")},
		{Role: protocol.RoleAssistant, Content: protocol.TextContent("ok")},
	}}
	if got, want := r.Text(), "review this\nok"; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
}

func TestSamplingBlocks(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    []protocol.Content
		wantErr bool
	}{
		{"single", `{"type":"text","text":"a"}`, []protocol.Content{protocol.TextContent("a")}, false},
		{"array", ` [{"type":"text","text":"a"},{"type":"text","text":"b"}]`, []protocol.Content{protocol.TextContent("a"), protocol.TextContent("b")}, false},
		{"garbage", `"nope"`, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := protocol.CreateMessageResult{Content: json.RawMessage(tc.content)}
			got, err := r.Blocks()
			if (err != nil) != tc.wantErr {
				t.Fatalf("Blocks() error = %v, wantErr %v", err, tc.wantErr)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("Blocks() (-want +got):\n%s", d)
			}
		})
	}
}

// nestedToolResult is a tool_result block nested depth times around a
// text block of size bytes, as a server may send one inside a result.
func nestedToolResult(depth, size int) []byte {
	return []byte(strings.Repeat(`{"type":"tool_result","toolUseId":"x","content":[`, depth) +
		`{"type":"text","text":"` + strings.Repeat("a", size) + `"}` + strings.Repeat(`]}`, depth))
}

// TestContentEncodeNestedLinear: encoding a server's deeply nested
// tool_result block costs in proportion to its size. Each block used to
// encode its nested blocks with json.Marshal, which re-scans what a
// MarshalJSON method returns, so every block was scanned and copied again
// at every level above it: the depth times the size (a 1 MB result 1000
// blocks deep took seconds and gigabytes to encode).
func TestContentEncodeNestedLinear(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	raw := nestedToolResult(500, 64<<10)
	var r protocol.CallToolResult
	if err := json.Unmarshal([]byte(`{"content":[`+string(raw)+`]}`), &r); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := json.Marshal(r)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"content":[` + string(raw) + `]}`; string(got) != want {
		t.Fatalf("Marshal changed the result: %d bytes, want %d", len(got), len(want))
	}
	// A few copies of the output, not one per level.
	if n, limit := after.TotalAlloc-before.TotalAlloc, uint64(16*len(got)+1<<20); n > limit {
		t.Errorf("Marshal of a %d-byte result 500 blocks deep allocated %d bytes, want at most %d", len(got), n, limit)
	}
}
