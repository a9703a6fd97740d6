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

// TestFunctionResponseManyParts: a result of many text parts (a server
// may answer 65,536 one-byte text blocks within the text bound) is joined
// in linear time. Each part copied the text joined so far: 65,536
// allocations, 8 GB and seconds of CPU for one response.
func TestFunctionResponseManyParts(t *testing.T) {
	content := make([]protocol.Content, 1<<16)
	for i := range content {
		content[i] = protocol.TextContent("x")
	}
	r := (&toolset.Set{}).Result("t", &protocol.CallToolResult{Content: content})
	var p *genai.Part
	allocs := testing.AllocsPerRun(1, func() { p = genaiconduit.FunctionResponse(&genai.FunctionCall{ID: "f1", Name: "t"}, r) })
	if allocs > 1000 {
		t.Errorf("%v allocations to join %d parts, want at most 1000", allocs, len(r.Parts))
	}
	if out, _ := p.FunctionResponse.Response["output"].(string); len(out) != 2*len(content)-1 || out[:4] != "x\nx\n" {
		t.Errorf("output of %d bytes, want %d one-byte lines", len(out), len(content))
	}
}
