package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestAgentWithoutKey runs the example against the scripted model and
// Conduit's test server: ADK's loop sends the model's call to the server
// and the answer carries the server's result.
func TestAgentWithoutKey(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, "", "gemini-test", "hello from MCP", &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `called demo__echo {"text":"hello from MCP"}`) || !strings.Contains(got, "The tool said: hello from MCP") {
		t.Fatalf("output:\n%s", got)
	}
}
