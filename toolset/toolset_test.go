package toolset_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

var everyProviderName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// TestNamesFitAndMapBack: 128-character dotted MCP names, the same name
// on two servers and names that differ only in characters providers
// refuse all get names every provider takes, distinct, that map back.
func TestNamesFitAndMapBack(t *testing.T) {
	long := strings.Repeat("a", 40) + ".b" + strings.Repeat("c", 40) + "." + strings.Repeat("d", 45)
	src := &staticSource{}
	for _, tt := range []struct{ server, name string }{
		{"github", long}, {"gitlab", long}, {"a", "echo"}, {"b", "echo"},
		{"a", "x.y"}, {"a", "x_y"}, {"a", "9lives"}, {"a", ""}, {"a", "été"},
	} {
		src.tools = append(src.tools, toolset.Tool{Name: tt.name, Server: tt.server, Tool: protocol.Tool{Name: tt.name}})
	}
	set, err := toolset.Load(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for i, tool := range set.Tools() {
		if !everyProviderName.MatchString(tool.Name) {
			t.Errorf("%q does not fit", tool.Name)
		}
		if seen[tool.Name] {
			t.Errorf("%q twice", tool.Name)
		}
		seen[tool.Name] = true
		back, ok := set.Tool(tool.Name)
		if !ok || back.Server != src.tools[i].Server || back.Tool.Name != src.tools[i].Tool.Name {
			t.Errorf("%q maps back to %+v", tool.Name, back)
		}
		if _, err := set.Call(context.Background(), tool.Name, `{}`); err != nil {
			t.Errorf("call %q: %v", tool.Name, err)
		}
	}
	for i, call := range src.calls {
		if want := src.tools[i].Tool.Name + " {}"; call != want {
			t.Errorf("call %d reached %q, want %q", i, call, want)
		}
	}
	// The same tools give the same names.
	again, _ := toolset.Load(context.Background(), src, nil)
	for i, tool := range again.Tools() {
		if tool.Name != set.Tools()[i].Name {
			t.Errorf("name %d changed: %q, then %q", i, set.Tools()[i].Name, tool.Name)
		}
	}
}

func declOf(t *testing.T, d toolset.Dialect, name string) toolset.Declaration {
	t.Helper()
	set := newSet(t, loadCorpus(t, "corpus/hard.json"))
	decls, err := set.Declarations(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range decls {
		if decl.Name == name {
			return decl
		}
	}
	t.Fatalf("no %s", name)
	return toolset.Declaration{}
}

func hasLoss(d toolset.Declaration, keyword string) bool {
	for _, l := range d.Losses {
		if l.Keyword == keyword {
			return true
		}
	}
	return false
}

// TestStrictFallback: a tool a strict dialect cannot express is declared
// without strict mode, and the reason is a loss; one it can stays strict.
func TestStrictFallback(t *testing.T) {
	for _, tc := range []struct {
		d          toolset.Dialect
		tool       string
		wantStrict bool
	}{
		{toolset.OpenAIStrict, "free_objects", false},
		{toolset.OpenAIStrict, "deep", false},
		{toolset.OpenAIStrict, "recursive_tree", true},
		{toolset.OpenAIStrict, "gosdk_style", true},
		{toolset.AnthropicStrict, "recursive_tree", false},
		{toolset.AnthropicStrict, "defs_ref", true},
		{toolset.OpenAI, "free_objects", false},
	} {
		decl := declOf(t, tc.d, tc.tool)
		if decl.Strict != tc.wantStrict {
			t.Errorf("%v %s: strict %v, want %v", tc.d, tc.tool, decl.Strict, tc.wantStrict)
		}
		if strictDialect(tc.d) && !tc.wantStrict && !hasLoss(decl, "strict") {
			t.Errorf("%v %s: no strict loss in %v", tc.d, tc.tool, decl.Losses)
		}
	}
}

func strictDialect(d toolset.Dialect) bool {
	return d == toolset.OpenAIStrict || d == toolset.AnthropicStrict
}

// TestLossesReported: what a dialect cannot say is in Losses and in the
// description.
func TestLossesReported(t *testing.T) {
	decl := declOf(t, toolset.Gemini, "consts_formats")
	for _, kw := range []string{"format", "const", "enum", "exclusiveMinimum"} {
		if !hasLoss(decl, kw) {
			t.Errorf("no %s loss: %v", kw, decl.Losses)
		}
	}
	if !strings.Contains(string(decl.Parameters), `(format: uri)`) {
		t.Errorf("format not in the description: %s", decl.Parameters)
	}
	if decl := declOf(t, toolset.Gemini, "recursive_tree"); !hasLoss(decl, "$ref") {
		t.Errorf("recursion cut without a loss: %v", decl.Losses)
	}
	if decl := declOf(t, toolset.Gemini, "no_schema"); decl.Parameters != nil {
		t.Errorf("gemini: a tool without parameters declares %s", decl.Parameters)
	}
	if decl := declOf(t, toolset.GeminiJSONSchema, "defs_ref"); strings.Contains(string(decl.Parameters), "$schema") {
		t.Errorf("$schema kept: %s", decl.Parameters)
	}
}

// TestOpenAIStrictNullsRoundTrip: a strict declaration makes optional
// properties nullable; the nulls a model writes for them never reach the
// server, while nulls the schema admits do.
func TestOpenAIStrictNullsRoundTrip(t *testing.T) {
	schema := `{"type":"object","properties":{"q":{"type":"string"},"page":{"type":"integer"},"cursor":{"type":["string","null"]},
		"opts":{"type":"object","properties":{"deep":{"type":"boolean"}}},"items":{"type":"array","items":{"$ref":"#/$defs/i"}}},
		"required":["q"],"$defs":{"i":{"type":"object","properties":{"n":{"type":"string"},"m":{"type":"string"}},"required":["n"]}}}`
	src := &staticSource{tools: []toolset.Tool{{Name: "search", Tool: protocol.Tool{Name: "search", InputSchema: json.RawMessage(schema)}}}}
	set, _ := toolset.Load(context.Background(), src, nil)
	decls, _ := set.Declarations(toolset.OpenAIStrict)
	if !decls[0].Strict || !strings.Contains(string(decls[0].Parameters), `"page":{"type":["integer","null"]}`) {
		t.Fatalf("declaration: %s", decls[0].Parameters)
	}
	_, err := set.Call(context.Background(), "search", `{"q":"x","page":null,"cursor":null,"opts":{"deep":null},"items":[{"n":"a","m":null}]}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `search {"q":"x","cursor":null,"opts":{},"items":[{"n":"a"}]}`; src.calls[0] != want {
		t.Fatalf("server got %s, want %s", src.calls[0], want)
	}
}

// TestResultShapes: each content block type becomes what models take.
func TestResultShapes(t *testing.T) {
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	size := int64(12)
	res := &protocol.CallToolResult{Content: []protocol.Content{
		protocol.TextContent("hello"),
		protocol.ImageContent(png, "image/png"),
		protocol.ImageContent(png, "image/svg+xml"),
		protocol.AudioContent("AAAA", "audio/wav"),
		protocol.ResourceLinkContent(protocol.Resource{URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Size: &size}),
		protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///b.txt", Text: "bee"}),
		protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///c.png", MIMEType: "image/png", Blob: png}),
	}, IsError: protocol.Bool(true)}
	set := newSet(t, nil)
	r := set.Result("t", res)
	if !r.IsError || len(r.Parts) != 7 {
		t.Fatalf("%+v", r)
	}
	kinds := ""
	for _, p := range r.Parts {
		kinds += p.Type[:1]
	}
	if kinds != "titttti" {
		t.Errorf("kinds %s", kinds)
	}
	text := r.Text()
	for _, want := range []string{"hello", "image/svg+xml", "audio/wav", "file:///a.txt | a.txt | text/plain", "[resource file:///b.txt]\nbee"} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	// Structured content alone is the text.
	r = set.Result("t", &protocol.CallToolResult{StructuredContent: json.RawMessage(`{"sum":3}`)})
	if r.Text() != `{"sum":3}` || string(r.Structured) != `{"sum":3}` || r.IsError {
		t.Errorf("structured: %+v", r)
	}
}

// TestResultBounds: text past MaxTextBytes is cut on a rune boundary,
// images past MaxImageBytes become notes.
func TestResultBounds(t *testing.T) {
	src := &staticSource{}
	set, _ := toolset.Load(context.Background(), src, &toolset.Options{MaxTextBytes: 10, MaxImageBytes: 4})
	r := set.Result("t", &protocol.CallToolResult{Content: []protocol.Content{
		protocol.TextContent("ééééééé"), // 14 bytes
		protocol.ImageContent(base64.StdEncoding.EncodeToString([]byte("123456")), "image/png"),
	}})
	if !r.Truncated || r.Parts[0].Text != "ééééé" || r.HasImages() {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(r.Text(), "4 more bytes left out, the limit is 10 bytes") {
		t.Errorf("%q", r.Text())
	}
	unlimited, _ := toolset.Load(context.Background(), src, &toolset.Options{MaxTextBytes: -1})
	big := strings.Repeat("x", toolset.DefaultMaxTextBytes*2)
	if r := unlimited.Result("t", &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(big)}}); r.Truncated || r.Text() != big {
		t.Errorf("unlimited was cut")
	}
	if r := (&toolset.Set{}).Result("t", &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent(big)}}); !r.Truncated || len(r.Parts[0].Text) != toolset.DefaultMaxTextBytes {
		t.Errorf("the zero Set does not cut at the default bound")
	}
	if r := set.Result("t", &protocol.CallToolResult{}); len(r.Parts) != 0 || r.Truncated {
		t.Errorf("empty result: %+v", r)
	}
}

// TestDefaultImageBound: the zero Options keep images of up to 5 MiB,
// counted decoded (without the padding and line breaks of the base64),
// in a result and replace a larger one by a note; a negative
// MaxImageBytes keeps it.
func TestDefaultImageBound(t *testing.T) {
	image := func(n int, wrap bool) *protocol.CallToolResult {
		data := base64.StdEncoding.EncodeToString(make([]byte, n))
		if wrap { // as MIME writes it: lines of 76 characters
			var b strings.Builder
			for len(data) > 76 {
				b.WriteString(data[:76] + "\r\n")
				data = data[76:]
			}
			data = b.String() + data
		}
		return &protocol.CallToolResult{Content: []protocol.Content{protocol.ImageContent(data, "image/png")}}
	}
	unlimited, _ := toolset.Load(context.Background(), &staticSource{}, &toolset.Options{MaxImageBytes: -1})
	tests := []struct {
		name string
		set  *toolset.Set
		size int
		wrap bool
		want bool
	}{
		{"default-at-bound", &toolset.Set{}, 5 << 20, false, true},
		{"default-at-bound-wrapped", &toolset.Set{}, 5 << 20, true, true},
		{"default-past-bound", &toolset.Set{}, 5<<20 + 1, false, false},
		{"unlimited", unlimited, 5<<20 + 1, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.set.Result("t", image(tt.size, tt.wrap))
			if got := r.HasImages(); got != tt.want {
				t.Fatalf("Result(image of %d bytes).HasImages() = %v, want %v", tt.size, got, tt.want)
			}
			if want := fmt.Sprintf("[image image/png, %d bytes]", tt.size); tt.want && r.Text() != want {
				t.Errorf("Text() = %q, want %q", r.Text(), want)
			}
		})
	}
}
