package toolset_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/toolset"
)

// staticSource is a Source over fixed tools that records the calls; the
// tests of the real clients and hosts are in source_test.go.
type staticSource struct {
	tools []toolset.Tool
	mu    sync.Mutex
	calls []string // "name args"
	reply func(name string, args json.RawMessage) (*protocol.CallToolResult, error)
}

func (s *staticSource) ListTools(context.Context) ([]toolset.Tool, error) { return s.tools, nil }

func (s *staticSource) CallTool(_ context.Context, t toolset.Tool, args json.RawMessage) (*protocol.CallToolResult, error) {
	s.mu.Lock()
	s.calls = append(s.calls, t.Tool.Name+" "+string(args))
	s.mu.Unlock()
	if s.reply != nil {
		return s.reply(t.Tool.Name, args)
	}
	return &protocol.CallToolResult{Content: []protocol.Content{protocol.TextContent("ok")}}, nil
}

func newSet(t testing.TB, tools []protocol.Tool) *toolset.Set {
	t.Helper()
	src := &staticSource{}
	for _, tool := range tools {
		src.tools = append(src.tools, toolset.Tool{Name: tool.Name, Tool: tool})
	}
	set, err := toolset.Load(context.Background(), src, nil)
	if err != nil {
		t.Fatal(err)
	}
	return set
}
