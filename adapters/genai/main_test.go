package genaiconduit_test

import (
	"context"
	"os"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	toolsettest.RemoveBinary()
	os.Exit(code)
}

func newClient(t *testing.T, url string) *genai.Client {
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{APIKey: "test-key", Backend: genai.BackendGeminiAPI,
		HTTPOptions: genai.HTTPOptions{BaseURL: url + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func candidate(parts ...any) map[string]any {
	return map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "finishReason": "STOP"}},
		"modelVersion": "gemini-sampled"}
}
