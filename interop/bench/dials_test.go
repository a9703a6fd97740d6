package bench

import (
	"context"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/conduitmcp/conduit/transport"
)

// dials counts the TCP connections the HTTP clients' default pools dial
// (http.DefaultTransport, which go-sdk, mcp-go and the raw client share,
// and transport.DefaultPool, Conduit's): dials/op shows whether a client
// gets its connections back from the pool or dials beside them.
var dials atomic.Int64

func init() {
	for _, t := range []*http.Transport{http.DefaultTransport.(*http.Transport), transport.DefaultPool().(*http.Transport)} {
		dial := t.DialContext
		t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return dial(ctx, network, addr)
		}
	}
}
