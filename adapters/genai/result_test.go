package genaiconduit_test

import (
	"encoding/base64"
	"testing"

	"google.golang.org/genai"

	genaiconduit "github.com/conduitmcp/conduit/adapters/genai"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// TestFunctionResponseShapes: structured content is the output, a tool
// error is the error, images are inline parts of the response.
func TestFunctionResponseShapes(t *testing.T) {
	call := &genai.FunctionCall{ID: "f1", Name: "t"}
	set := &toolset.Set{}
	png := []byte("\x89PNG fake")
	p := genaiconduit.FunctionResponse(call, set.Result("t", &protocol.CallToolResult{
		Content:           []protocol.Content{protocol.TextContent(`{"sum":3}`), protocol.ImageContent(base64.StdEncoding.EncodeToString(png), "image/png")},
		StructuredContent: []byte(`{"sum":3}`)}))
	fr := p.FunctionResponse
	out, _ := fr.Response["output"].(map[string]any)
	if fr.ID != "f1" || fr.Name != "t" || out["sum"] != 3.0 || len(fr.Parts) != 1 || string(fr.Parts[0].InlineData.Data) != string(png) || fr.Parts[0].InlineData.MIMEType != "image/png" {
		t.Fatalf("%+v", fr)
	}
	p = genaiconduit.FunctionResponse(call, set.Result("t", &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("boom")}, IsError: protocol.Bool(true)}))
	if p.FunctionResponse.Response["error"] != "boom" || p.FunctionResponse.Response["output"] != nil {
		t.Fatalf("%+v", p.FunctionResponse)
	}
}
