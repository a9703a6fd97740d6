package client_test

import (
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
)

// TestRetryProbeTimeout: RetryPolicy.ProbeTimeout bounds how long one era
// probe waits. The server ignores the first server/discover; with a 200ms
// probe timeout the client retries (a pipe is not a command transport)
// and connects in the modern era well before the 5s default would have
// let the first probe give up.
func TestRetryProbeTimeout(t *testing.T) {
	so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultSilent, Method: "server/discover", Times: 1}}}
	start := time.Now()
	f := connect(t, tPipe, so, client.WithRetry(client.RetryPolicy{ProbeTimeout: 200 * time.Millisecond, InitialInterval: time.Millisecond}))
	elapsed := time.Since(start)
	if elapsed >= 3*time.Second {
		t.Errorf("Connect took %v: the 200ms probe timeout was not applied", elapsed)
	}
	n := f.c.Negotiated()
	if n.Era != negotiation.EraModern {
		t.Errorf("era %v, want modern (trace %+v)", n.Era, n.Trace)
	}
	probes := 0
	for _, st := range n.Trace {
		if st.Step == "probe" {
			probes++
		}
	}
	if probes < 2 {
		t.Errorf("%d probe steps, want the timed-out one and its retry (trace %+v)", probes, n.Trace)
	}
}
