package anthropicconduit_test

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"testing"

	anthropicconduit "github.com/conduitmcp/conduit/adapters/anthropic"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// TestToolResultImages: a tool's error with text and an image becomes a
// tool_result block with is_error, a text block and a base64 image block.
func TestToolResultImages(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	r := (&toolset.Set{}).Result("shot", &protocol.CallToolResult{Content: []protocol.Content{
		protocol.TextContent("failed, screenshot attached"), protocol.ImageContent(png, "image/png")}, IsError: protocol.Bool(true)})
	got, err := json.Marshal(anthropicconduit.ToolResult("toolu_9", r))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool_use_id":"toolu_9","is_error":true,"type":"tool_result","content":[{"text":"failed, screenshot attached","type":"text"},
		{"source":{"data":"` + png + `","media_type":"image/png","type":"base64"},"type":"image"}]}`
	var g, w any
	_ = json.Unmarshal(got, &g)
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
