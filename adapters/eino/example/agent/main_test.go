package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestAgentScripted runs the example with the scripted model and
// Conduit's test server: the agent's call reaches the server and its
// answer carries the server's result.
func TestAgentScripted(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, "", "hello from MCP", &scriptedModel{}, &out); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, "The tool said: hello from MCP") {
		t.Fatalf("output:\n%s", got)
	}
}
