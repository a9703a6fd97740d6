package transport_test

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the test binary as a stdio MCP test server when
// serverEnv is set (see stdio_server_test.go), and otherwise runs the tests
// with a goroutine leak check: every connection must join what it started.
// Nothing is ignored.
func TestMain(m *testing.M) {
	if mode := os.Getenv(serverEnv); mode != "" {
		os.Exit(runTestServer(mode))
	}
	goleak.VerifyTestMain(m)
}
