// Package leakcheck helps the tests' goroutine leak checks: the idle TCP
// connections of the HTTP pools belong to the pools, not to any client,
// and their goroutines are not leaks; a test binary closes them before it
// counts.
package leakcheck

import (
	"net/http"

	"github.com/conduitmcp/conduit/transport"
)

// M is what goleak.VerifyTestMain runs (a *testing.M).
type M interface{ Run() int }

// Flushing returns m whose Run, after the tests, closes the idle
// connections of transport.DefaultPool and of http.DefaultTransport.
func Flushing(m M) M { return flushing{m} }

type flushing struct{ m M }

func (f flushing) Run() int {
	code := f.m.Run()
	Flush()
	return code
}

// Flush closes the idle connections of transport.DefaultPool and of
// http.DefaultTransport.
func Flush() {
	transport.CloseIdleConnections()
	http.DefaultClient.CloseIdleConnections()
}
