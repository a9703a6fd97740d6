package openaiconduit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/openai/openai-go/v3"

	openaiconduit "github.com/conduitmcp/conduit/adapters/openai"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/toolset"
)

// BenchmarkChatToolCall measures what the adapter adds to a tool call:
// "direct" is client.CallTool on an in-memory test server, "adapter" runs
// the same call from a chat completion's message to the tool message
// (ChatToolMessages).
func BenchmarkChatToolCall(b *testing.B) {
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
	var msg openai.ChatCompletionMessage
	if err := json.Unmarshal([]byte(`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"echo","arguments":`+
		string(mustJSON(args))+`}}]}`), &msg); err != nil {
		b.Fatal(err)
	}
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.CallTool(ctx, "echo", json.RawMessage(args)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := openaiconduit.ChatToolMessages(ctx, set, msg)
			if err != nil || len(out) != 1 {
				b.Fatal(err)
			}
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
