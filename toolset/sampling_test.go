package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

func TestSamplingHelpers(t *testing.T) {
	for _, tc := range []struct {
		blocks []protocol.Content
		want   string
	}{
		{nil, `{"type":"text","text":""}`},
		{[]protocol.Content{protocol.TextContent("a")}, `{"type":"text","text":"a"}`},
		{[]protocol.Content{protocol.TextContent("a"), protocol.TextContent("b")}, `[{"type":"text","text":"a"},{"type":"text","text":"b"}]`},
	} {
		r, err := toolset.SamplingResult("m", "endTurn", tc.blocks)
		var got, want any
		_ = json.Unmarshal(r.Content, &got)
		_ = json.Unmarshal([]byte(tc.want), &want)
		if err != nil || !reflect.DeepEqual(got, want) || r.Role != protocol.RoleAssistant || r.Model != "m" {
			t.Errorf("%v: %+v %s", err, r, r.Content)
		}
	}
	pick := func(p *protocol.ModelPreferences) string {
		if p != nil && len(p.Hints) > 0 {
			return "picked-" + p.Hints[0].Name
		}
		return ""
	}
	if m := toolset.SamplingModel("default", pick, &protocol.ModelPreferences{Hints: []protocol.ModelHint{{Name: "x"}}}); m != "picked-x" {
		t.Errorf("model %q", m)
	}
	if m := toolset.SamplingModel("default", pick, nil); m != "default" {
		t.Errorf("model %q", m)
	}
	r := toolset.BlockResult(protocol.Content{Type: protocol.ContentToolResult, Content: []protocol.Content{protocol.TextContent("out")}, IsError: true})
	if !r.IsError || r.Text() != "out" {
		t.Errorf("block result %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if toolset.Stopped(ctx, errors.New("tool failed")) {
		t.Error("an error with ctx alive stopped the loop")
	}
	cancel()
	if !toolset.Stopped(ctx, &toolset.CallError{Err: context.Canceled}) || toolset.Stopped(ctx, nil) {
		t.Error("Stopped")
	}
}

// TestSamplingNames: a sampling request's tool names that differ only in
// characters providers refuse, repeat, or are too long get names every
// provider takes, distinct, that map back to the server's.
func TestSamplingNames(t *testing.T) {
	tools := []protocol.Tool{{Name: "get.weather"}, {Name: "get_weather"}, {Name: "get.weather"}, {Name: strings.Repeat("a", 128)}, {Name: strings.Repeat("a", 127) + "."}}
	names := toolset.NewSamplingNames(tools)
	seen := map[string]bool{}
	for i, tool := range tools {
		n := names.Tool(i)
		if !everyProviderName.MatchString(n) || seen[n] {
			t.Errorf("Tool(%d) = %q: does not fit, or twice", i, n)
		}
		seen[n] = true
		if got := names.Server(n); got != tool.Name {
			t.Errorf("Server(%q) = %q, want %q", n, got, tool.Name)
		}
	}
	if got := names.Model("get_weather"); got != names.Tool(1) {
		t.Errorf("Model(get_weather) = %q, want %q", got, names.Tool(1))
	}
	if got := names.Model("other.tool"); got != "other_tool" {
		t.Errorf("Model(other.tool) = %q, want other_tool", got)
	}
	if got := names.Server("other"); got != "other" {
		t.Errorf("Server(other) = %q, want other", got)
	}
}

// TestSamplingInput: blank arguments are {}, a JSON object is kept as it
// is, anything else is ErrInvalidArguments.
func TestSamplingInput(t *testing.T) {
	for args, want := range map[string]string{``: `{}`, " \n": `{}`, `{"a":1}`: `{"a":1}`, ` {"a":1} `: `{"a":1}`,
		`{"a":`: "", `[]`: "", `null`: "", `"{}"`: ""} {
		got, err := toolset.SamplingInput("t", args)
		if want == "" {
			if !errors.Is(err, toolset.ErrInvalidArguments) {
				t.Errorf("SamplingInput(%q) = %s, %v; want ErrInvalidArguments", args, got, err)
			}
		} else if err != nil || string(got) != want {
			t.Errorf("SamplingInput(%q) = %s, %v; want %s", args, got, err, want)
		}
	}
}
