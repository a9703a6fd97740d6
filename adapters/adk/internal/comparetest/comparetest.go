// Package comparetest runs the two programs of the lines-of-code
// comparison (example/compare) the same way.
package comparetest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genai"

	"github.com/conduitmcp/conduit/toolset/toolsettest"
)

// Run is a program's run function: the agent over the mcpServers file at
// path, asking the model of cc, writing the answer to out.
type Run func(ctx context.Context, path string, cc *genai.ClientConfig, prompt string, out io.Writer) error

// Check runs run against a scripted Gemini endpoint and conduit serve
// (legacy era, stdio) named in an mcpServers file: the model's echo call
// must reach the server and the answer carry its result.
func Check(t *testing.T, run Run) {
	t.Helper()
	defer toolsettest.RemoveBinary()
	path := filepath.Join(t.TempDir(), "mcp.json")
	file, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		"legacy": map[string]any{"command": toolsettest.ConduitBinary(t), "args": []string{"serve", "--era", "legacy"}}}})
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	ep := toolsettest.NewEndpoint(t, func(n int, _ string, body []byte) (int, any) {
		var req struct {
			Tools []struct {
				FunctionDeclarations []struct{ Name string } `json:"functionDeclarations"`
			} `json:"tools"`
		}
		_ = json.Unmarshal(body, &req)
		part := map[string]any{"text": "answered: " + string(body[strings.LastIndex(string(body), `"functionResponse"`)+1:])}
		if n == 0 && len(req.Tools) > 0 {
			for _, fd := range req.Tools[0].FunctionDeclarations {
				if strings.HasSuffix(fd.Name, "echo") {
					part = map[string]any{"functionCall": map[string]any{"id": "f1", "name": fd.Name, "args": map[string]string{"text": "hello"}}}
				}
			}
		}
		return 200, map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP"}}}
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	cc := &genai.ClientConfig{APIKey: "no-key", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: ep.URL + "/"}}
	if err := run(ctx, path, cc, "Echo hello.", &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.HasPrefix(got, "answered: ") || !strings.Contains(got, `"output":"hello"`) {
		t.Fatalf("output: %s", got)
	}
}
