package toolset_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
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
