package transport_test

import (
	"github.com/conduitmcp/conduit/transport"
	"net/http"
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
	goleak.VerifyTestMain(flushPool{m})
}

// flushPool runs the tests, then closes the idle connections of the
// shared pools (transport.DefaultPool, http.DefaultTransport), which belong to the pools and not to
// any connection, before goleak looks for goroutines left behind: what a
// net/http program does before counting its goroutines.
type flushPool struct{ m *testing.M }

func (f flushPool) Run() int {
	code := f.m.Run()
	transport.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
	return code
}
