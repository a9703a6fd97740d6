package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/conduitmcp/conduit/client"
)

// BenchmarkCallToolMiddleware measures what a no-op middleware adds to a
// tools/call over the in-memory pipe.
func BenchmarkCallToolMiddleware(b *testing.B) {
	noop := func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) { return next(ctx, req) }
	}
	for _, bc := range []struct {
		name string
		opts []client.Option
	}{
		{"none", nil},
		{"noop", []client.Option{client.WithMiddleware(noop)}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			c, stop := benchClient(b, "pipe", bc.opts...)
			defer stop()
			ctx := context.Background()
			args := map[string]any{"a": 1, "b": 2}
			if _, err := c.CallTool(ctx, "add", args); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := c.CallTool(ctx, "add", args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
