package conduittest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

// TestProbeOutcomes produces every outcome of the era-probe table with its
// fault and checks the verdict the public client records for the probe.
func TestProbeOutcomes(t *testing.T) {
	for _, row := range conduittest.ProbeOutcomes() {
		vias := []string{"memory", "http"}
		switch row.Transport {
		case "stdio":
			vias = []string{"stdio"}
		case "http":
			vias = []string{"http"}
		}
		for _, via := range vias {
			t.Run(via+"/"+row.Outcome, func(t *testing.T) {
				var opts []conduittest.Option
				if row.Fault != "" {
					opts = append(opts, conduittest.WithFaults(row.Fault))
				}
				srv := conduittest.NewServer(t, opts...)
				probeTimeout := 10 * time.Second // a race-enabled subprocess starts slowly
				if row.Fault.Kind() == conduittest.FaultSilent {
					probeTimeout = 300 * time.Millisecond
				}
				trace := probeTrace(t, srv, via, probeTimeout)
				for _, st := range trace {
					if st.Step == "probe" {
						if verdict, _, _ := strings.Cut(st.Verdict, " "); verdict != row.Verdict {
							t.Errorf("probe verdict %q, want %q (trace %+v)", st.Verdict, row.Verdict, trace)
						}
						return
					}
				}
				t.Errorf("no probe step in trace %+v", trace)
			})
		}
	}
}

// probeTrace connects with protocol auto and returns the negotiation
// trace, from the client or from the negotiation error.
func probeTrace(t *testing.T, srv *conduittest.Server, via string, probeTimeout time.Duration) []client.TraceStep {
	t.Helper()
	c, err := dial(t, srv, via,
		client.WithRetry(client.RetryPolicy{MaxAttempts: 2, InitialInterval: time.Millisecond, MaxElapsed: time.Second, ProbeTimeout: probeTimeout}))
	if err == nil {
		defer c.Close()
		return c.Negotiated().Trace
	}
	var ce *client.Error
	if errors.As(err, &ce) && ce.Trace != nil {
		return ce.Trace
	}
	t.Logf("connect error without a trace: %v", err)
	return nil
}
