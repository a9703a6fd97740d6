package toolset_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// within runs f and fails the test when it has not returned after d: a
// peer's input must not make the package spin. Each d is many times what
// f takes under -race on two loaded cores, and well under what it took
// before the fix its test is for. f keeps running after a
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
				within(t, time.Minute, fmt.Sprintf("Convert(%v)", d), func() {
					if _, err := toolset.Convert(toolset.Tool{Name: "t", Tool: tool}, d); err != nil && !errors.Is(err, toolset.ErrSchemaTooLarge) {
						t.Errorf("Convert(%v) = %v", d, err)
					}
				})
			}
			set := newSet(t, []protocol.Tool{tool})
			within(t, time.Minute, "Call", func() {
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

// nested returns inner under levels objects, each a property named key.
func nested(inner string, levels int, key string) string {
	for range levels {
		inner = `{"type":"object","properties":{"` + key + `":` + inner + `}}`
	}
	return inner
}

// refsTo returns an object schema of n properties, each a reference to
// the definition def.
func refsTo(n int, def string) string {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{"a":` + def + `},"properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"$ref":"#/$defs/a"}`, i)
	}
	b.WriteString(`}}`)
	return b.String()
}

// TestConversionBounded: what a conversion makes (the declaration and its
// losses) stays within four times the schema or 4 MiB, and takes no more
// time than that much work; past it the tool is left out with
// ErrSchemaTooLarge. The node bound alone did not hold it: Gemini's
// Schema type inlines references, so 150 KB whose 4,900 properties refer
// to one definition with a 10 KB description made a 49 MB declaration;
// each loss of a node nested under long names carries its long path, so
// 66 KB made 100 MB of losses; and a long enum moved into the
// description was written whole for each reference, then cut to 200
// bytes.
func TestConversionBounded(t *testing.T) {
	keywords := make([]string, 2000)
	for i := range keywords {
		keywords[i] = fmt.Sprintf(`"x%d":1`, i)
	}
	var enum strings.Builder
	for i := range 200000 {
		if i > 0 {
			enum.WriteByte(',')
		}
		fmt.Fprint(&enum, i)
	}
	for _, tc := range []struct{ name, schema string }{
		{"inlined description", refsTo(4900, `{"type":"string","description":"`+strings.Repeat("d", 10000)+`"}`)},
		{"losses under long names", nested(`{"type":"string",`+strings.Join(keywords, ",")+`}`, 50, strings.Repeat("k", 1000))},
		{"inlined enum", refsTo(4900, `{"type":"integer","enum":[`+enum.String()+`]}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tool := toolset.Tool{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(tc.schema)}}
			bound := max(4<<20, 4*len(tc.schema))
			for _, d := range allDialects {
				within(t, time.Minute, fmt.Sprintf("Convert(%v)", d), func() {
					decl, err := toolset.Convert(tool, d)
					if errors.Is(err, toolset.ErrSchemaTooLarge) {
						return
					}
					if err != nil {
						t.Errorf("Convert(%v) = %v", d, err)
						return
					}
					size := len(decl.Parameters)
					for _, l := range decl.Losses {
						size += len(l.Path) + len(l.Keyword) + len(l.Note)
					}
					if size > bound {
						t.Errorf("Convert(%v) made %d bytes of declaration and losses from a schema of %d, want at most %d or ErrSchemaTooLarge", d, size, len(tc.schema), bound)
					}
				})
			}
		})
	}
}

// TestResultImageNotBase64: an image block (or an embedded image resource)
// whose data is not base64 is described in a note, not given to the model
// as an image: an API refuses the request with it, and every request of
// the conversation after it, and genaiconduit dropped it without a word.
func TestResultImageNotBase64(t *testing.T) {
	good := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nfake"))
	for _, c := range []protocol.Content{
		protocol.ImageContent("not base64!", "image/png"),
		protocol.ImageContent(good[:len(good)-1], "image/png"),
		protocol.EmbeddedResourceContent(protocol.ResourceContents{URI: "file:///c.png", MIMEType: "image/png", Blob: "%%%%"}),
	} {
		r := (&toolset.Set{}).Result("t", &protocol.CallToolResult{Content: []protocol.Content{c}})
		if r.HasImages() || len(r.Parts) != 1 || !strings.Contains(r.Parts[0].Text, "not valid base64") {
			t.Errorf("Result(%+v).Parts = %+v, want one note on data that is not valid base64", c, r.Parts)
		}
	}
	r := (&toolset.Set{}).Result("t", &protocol.CallToolResult{Content: []protocol.Content{protocol.ImageContent(good, "image/png")}})
	if !r.HasImages() {
		t.Errorf("Result(a valid image).Parts = %+v, want the image", r.Parts)
	}
}

// TestLoadManyDuplicates: a server that lists one tool name 20,000 times
// (300 KB of tools/list; the client passes them on as listed) gets a
// distinct name for each in linear time: each duplicate tried every
// suffix taken before it, 40 s of CPU for these and minutes for more.
func TestLoadManyDuplicates(t *testing.T) {
	src := &staticSource{}
	for range 20000 {
		src.tools = append(src.tools, toolset.Tool{Name: "x", Tool: protocol.Tool{Name: "x"}})
	}
	within(t, 10*time.Second, "Load", func() {
		set, err := toolset.Load(context.Background(), src, nil)
		if err != nil {
			t.Errorf("Load = %v", err)
			return
		}
		seen := map[string]bool{}
		for _, tool := range set.Tools() {
			if seen[tool.Name] || !everyProviderName.MatchString(tool.Name) {
				t.Errorf("name %q twice or unfit", tool.Name)
				return
			}
			seen[tool.Name] = true
		}
	})
}

// TestManyDefsLinear: 4,990 definitions whose names differ only in
// characters a definition's name does not keep (they all become "x_")
// are named in linear time: each tried every name taken before it, two
// seconds of CPU per tool and dialect.
func TestManyDefsLinear(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"type":"object","$defs":{`)
	const n = 4990
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"x%c":{"type":"string"}`, rune(0x4e00+i))
	}
	b.WriteString(`},"properties":{`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"p%d":{"$ref":"#/$defs/x%c"}`, i, rune(0x4e00+i))
	}
	b.WriteString(`}}`)
	var tools []protocol.Tool
	for i := range 3 {
		tools = append(tools, protocol.Tool{Name: fmt.Sprint("t", i), InputSchema: json.RawMessage(b.String())})
	}
	set := newSet(t, tools)
	within(t, time.Minute, "Declarations", func() {
		for _, d := range allDialects {
			decls, err := set.Declarations(d)
			if err != nil {
				t.Errorf("Declarations(%v) = %v", d, err)
				continue
			}
			if d == toolset.Gemini {
				continue // references inlined
			}
			if got := strings.Count(string(decls[0].Parameters), `":{"type":"string"}`); got != n {
				t.Errorf("Declarations(%v): %d definitions, want %d", d, got, n)
			}
		}
	})
}

// TestOpenAIRootKeywords: a root allOf that cannot be merged into one
// object, a root not and a root enum are not declared to OpenAI, whose
// API refuses them at the top level of parameters (and with them every
// request that declares the tool): they move into the description.
func TestOpenAIRootKeywords(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","allOf":[{"properties":{"a":{"type":"string"}}},{"anyOf":[{"required":["a"]},{"required":["b"]}]}]}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"not":{"required":["a"]}}`,
		`{"type":"object","properties":{"a":{"type":"string"}},"enum":[{"a":"x"}]}`,
	} {
		tool := toolset.Tool{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(schema)}}
		for _, d := range []toolset.Dialect{toolset.OpenAI, toolset.OpenAIStrict} {
			decl, err := toolset.Convert(tool, d)
			if err != nil {
				t.Errorf("Convert(%s, %v) = %v", schema, d, err)
				continue
			}
			if err := toolsettest.Check(d, decl.Name, decl.Parameters, decl.Strict); err != nil {
				t.Errorf("Convert(%s, %v) = %s: %v", schema, d, decl.Parameters, err)
			}
			if len(decl.Losses) == 0 {
				t.Errorf("Convert(%s, %v): no loss", schema, d)
			}
		}
	}
}

// TestUnknownTypeNames: a type name JSON Schema does not have ("", "foo")
// is dropped with a loss, the node declared as any value, rather than
// sent to an API that refuses it (Gemini's Schema type has no such type).
func TestUnknownTypeNames(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"foo"},"b":{"type":["string",""]}}}`,
		`{"type":"object","properties":{"a":{"type":""}}}`,
	} {
		tool := toolset.Tool{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(schema)}}
		for _, d := range allDialects {
			decl, err := toolset.Convert(tool, d)
			if err != nil {
				t.Errorf("Convert(%s, %v) = %v", schema, d, err)
				continue
			}
			if err := toolsettest.Check(d, decl.Name, decl.Parameters, decl.Strict); err != nil {
				t.Errorf("Convert(%s, %v) = %s: %v", schema, d, decl.Parameters, err)
			}
			if strings.Contains(string(decl.Parameters), `"foo"`) || strings.Contains(string(decl.Parameters), `""`) {
				t.Errorf("Convert(%s, %v) = %s, want no unknown type", schema, d, decl.Parameters)
			}
			if !hasLoss(decl, "type") {
				t.Errorf("Convert(%s, %v): no type loss in %v", schema, d, decl.Losses)
			}
		}
	}
}

// TestGeminiEnumOnOtherTypes: an enum of strings on a node whose type is
// not string is not declared in Gemini's Schema type, which takes enums
// (format "enum") on strings only: it moves into the description.
func TestGeminiEnumOnOtherTypes(t *testing.T) {
	for _, schema := range []string{
		`{"type":"object","properties":{"a":{"type":"integer","enum":["1","2"]}}}`,
		`{"type":"object","properties":{"a":{"type":"null","enum":[]}}}`,
		`{"type":"object","properties":{"a":{"type":["boolean","null"],"enum":["yes"]}}}`,
	} {
		tool := toolset.Tool{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(schema)}}
		decl, err := toolset.Convert(tool, toolset.Gemini)
		if err != nil {
			t.Errorf("Convert(%s) = %v", schema, err)
			continue
		}
		if err := toolsettest.Check(toolset.Gemini, decl.Name, decl.Parameters, false); err != nil {
			t.Errorf("Convert(%s) = %s: %v", schema, decl.Parameters, err)
		}
		if !hasLoss(decl, "enum") {
			t.Errorf("Convert(%s): no enum loss in %v", schema, decl.Losses)
		}
	}
	// A string enum stays.
	decl, err := toolset.Convert(toolset.Tool{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":["string","null"],"enum":["x"]}}}`)}}, toolset.Gemini)
	if err != nil || !strings.Contains(string(decl.Parameters), `"enum":["x"]`) {
		t.Errorf("Convert(a string enum) = %s, %v; want the enum kept", decl.Parameters, err)
	}
}

// TestCallManyNullsLinear: arguments that set 50,000 optional
// properties to null (what a strict dialect has a model write for every
// optional property it leaves out) are cleaned in linear time. Each null
// removed copied the names of the properties after it: 19 GB allocated
// and seconds of CPU for 672 KB of arguments.
func TestCallManyNullsLinear(t *testing.T) {
	const n = 50000
	var props, args strings.Builder
	for i := range n {
		if i > 0 {
			props.WriteByte(',')
			args.WriteByte(',')
		}
		fmt.Fprintf(&props, `"p%d":{"type":"string"}`, i)
		fmt.Fprintf(&args, `"p%d":null`, i)
	}
	src := &staticSource{tools: []toolset.Tool{{Name: "t", Tool: protocol.Tool{Name: "t",
		InputSchema: json.RawMessage(`{"type":"object","properties":{` + props.String() + `}}`)}}}}
	set, err := toolset.Load(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = set.Call(context.Background(), "t", "{"+args.String()+"}")
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if m := after.TotalAlloc - before.TotalAlloc; m > 1<<30 {
		t.Errorf("%d MB allocated to clean %d KB of arguments, want less than 1 GB", m>>20, args.Len()>>10)
	}
	if len(src.calls) != 1 || src.calls[0] != "t {}" {
		t.Errorf("the tool ran with %.100q, want {}", src.calls)
	}
}

// TestCallArgumentsPerSchemaNode: the schema node that describes each
// element of a long array in the model's arguments is resolved once per
// call, not once per element: a $ref with a 2 MB name, or a required
// list of 100,000 names, was read again for each of 200,000 elements
// (hundreds of seconds of CPU for a 1 MB argument).
func TestCallArgumentsPerSchemaNode(t *testing.T) {
	long := strings.Repeat("d", 2<<20)
	for _, tc := range []struct{ name, schema, elem string }{
		{"ref", `{"type":"object","properties":{"a":{"type":"array","items":{"$ref":"#/$defs/` + long + `"}}},"$defs":{"` + long + `":{"type":"string"}}}`, "null"},
		{"required", `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"x":{"type":"string"}},"required":` +
			jsonList(100000, func(i int) string { return fmt.Sprintf("r%d", i) }) + `}}}}`, "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			set := newSet(t, []protocol.Tool{{Name: "t", InputSchema: json.RawMessage(tc.schema)}})
			args := `{"a":[` + strings.Repeat(tc.elem+",", 200000) + `{"x":null}]}`
			within(t, 30*time.Second, "Call", func() {
				if _, err := set.Call(context.Background(), "t", args); err != nil {
					t.Errorf("Call = %v", err)
				}
			})
		})
	}
}

// TestCallSharedAlternatives: whether an optional property the model
// set to null admits null is decided in time linear in its schema, even
// when the alternatives of each definition point, ten times over, at the
// next of 16 definitions (a 3 KB schema); each path through them was
// followed, 10^16 of them, and the call never ran.
func TestCallSharedAlternatives(t *testing.T) {
	const levels, fan = 16, 10
	var defs []string
	for i := range levels {
		alts := strings.TrimSuffix(strings.Repeat(fmt.Sprintf(`{"$ref":"#/$defs/d%d"},`, i+1), fan), ",")
		defs = append(defs, fmt.Sprintf(`"d%d":{"anyOf":[%s]}`, i, alts))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string"}`, levels))
	src := &staticSource{tools: []toolset.Tool{{Name: "t", Tool: protocol.Tool{Name: "t", InputSchema: json.RawMessage(
		`{"type":"object","properties":{"p":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`)}}}}
	set, err := toolset.Load(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	within(t, 30*time.Second, "Call", func() {
		if _, err := set.Call(context.Background(), "t", `{"p":null}`); err != nil {
			t.Errorf("Call = %v", err)
		}
	})
	if len(src.calls) != 1 || src.calls[0] != "t {}" {
		t.Errorf("the tool ran with %q, want {} (the null of an optional string removed)", src.calls)
	}
}

// TestDeclarationsBoundedPerSet: the declarations of a Set grow past
// four times its schemas by 64 MiB at most, not by 4 MiB per tool: 60
// tools of 5 KB, each inlined for Gemini into 1.5 MB, made 89 MB (a
// server's 16 MiB tools/list, 5 GB).
func TestDeclarationsBoundedPerSet(t *testing.T) {
	const levels, tools = 11, 60
	desc := strings.Repeat("x", 300)
	var defs []string
	for i := range levels {
		defs = append(defs, fmt.Sprintf(`"d%d":{"type":"object","description":%q,"properties":{"a":{"$ref":"#/$defs/d%d"},"b":{"$ref":"#/$defs/d%d"}}}`, i, desc, i+1, i+1))
	}
	defs = append(defs, fmt.Sprintf(`"d%d":{"type":"string","description":%q}`, levels, desc))
	schema := `{"type":"object","properties":{"p":{"$ref":"#/$defs/d0"}},"$defs":{` + strings.Join(defs, ",") + `}}`
	var list []protocol.Tool
	for i := range tools {
		list = append(list, protocol.Tool{Name: fmt.Sprintf("t%d", i), InputSchema: json.RawMessage(schema)})
	}
	set := newSet(t, list)
	decls, err := set.Declarations(toolset.Gemini)
	if !errors.Is(err, toolset.ErrSchemaTooLarge) {
		t.Errorf("Declarations = %v, want some tools left out with ErrSchemaTooLarge", err)
	}
	total := 0
	for _, d := range decls {
		total += len(d.Parameters)
	}
	if limit := 4*tools*len(schema) + 64<<20; total > limit || len(decls) == 0 {
		t.Errorf("%d declarations of %d bytes in all, want some and at most %d", len(decls), total, limit)
	}
	// One tool alone converts as before.
	if _, err := toolset.Convert(toolset.Tool{Name: "t", Tool: list[0]}, toolset.Gemini); err != nil {
		t.Errorf("Convert = %v", err)
	}
}
