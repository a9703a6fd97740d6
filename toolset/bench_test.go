package toolset_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// BenchmarkToolCall measures what a Set adds to one tool call: "direct"
// is client.CallTool on an in-memory test server, "set" is Set.Call of
// the same call as a model writes it (name lookup, argument checks,
// result conversion), "overhead" is Set.Call on a source that answers at
// once (the Set's own cost alone).
func BenchmarkToolCall(b *testing.B) {
	srv := conduittest.NewServer(b)
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	set, err := toolset.Load(ctx, toolset.FromClient(c), nil)
	if err != nil {
		b.Fatal(err)
	}
	args := `{"text":"hello, tool"}`
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.CallTool(ctx, "echo", json.RawMessage(args)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("set", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := set.Call(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
	static := &staticSource{
		tools: []toolset.Tool{{Name: "echo", Tool: protocol.Tool{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)}}},
		reply: func(string, json.RawMessage) (*protocol.CallToolResult, error) {
			return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("hello, tool")}}, nil
		},
	}
	sset, _ := toolset.Load(ctx, static, nil)
	b.Run("overhead", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			static.calls = static.calls[:0]
			if _, err := sset.Call(ctx, "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}
