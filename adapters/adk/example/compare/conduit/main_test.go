package main

import (
	"testing"

	"github.com/conduitmcp/conduit/adapters/adk/internal/comparetest"
)

// TestAgent runs the program against a scripted Gemini endpoint and
// conduit serve (legacy era, stdio) named in an mcpServers file: the
// model's echo call reaches the server and the answer carries its result.
func TestAgent(t *testing.T) { comparetest.Check(t, run) }
