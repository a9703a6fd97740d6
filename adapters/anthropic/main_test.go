package anthropicconduit_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	toolsettest.RemoveBinary()
	os.Exit(code)
}

func newClient(url string) *anthropic.Client {
	c := anthropic.NewClient(option.WithBaseURL(url+"/"), option.WithAPIKey("test-key"), option.WithMaxRetries(0))
	return &c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func message(content []any, stop string) map[string]any {
	return map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-test", "content": content,
		"stop_reason": stop, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
}
