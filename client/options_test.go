package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
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

// lastReceived is the last request of method the server received.
func lastReceived(t *testing.T, srv *testserver.Server, method string) testserver.Recorded {
	t.Helper()
	var last *testserver.Recorded
	for _, r := range srv.Received() {
		if r.Method == method {
			last = &r
		}
	}
	if last == nil {
		t.Fatalf("the server never received %s", method)
	}
	return *last
}

// TestCallDefaults: the call options of WithCallDefaults (two of them,
// which add up) reach every request, those without call options (a
// listing) included, and a call's own options override them per key
// without changing them for the next call. Both eras, pipe and Streamable
// HTTP (headers only travel there).
func TestCallDefaults(t *testing.T) {
	meta := client.WithCallDefaults(client.WithCallMeta(map[string]any{"com.example/tenant": "acme", "com.example/zone": "eu"}))
	headers := client.WithCallDefaults(client.WithCallHeaders(http.Header{"X-Tenant": {"acme"}}))
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), meta, headers)
				ctx := testCtx(t)
				modern := era.p == client.Modern
				if _, err := f.c.ListTools(ctx, ""); err != nil {
					t.Fatalf("ListTools: %v", err)
				}
				got := lastReceived(t, f.srv, protocol.MethodToolsList)
				checkMeta(t, got.Params, "com.example/tenant", `"acme"`, modern)
				if h := got.Headers.Get("X-Tenant"); (tr == tHTTP) != (h == "acme") {
					t.Errorf("tools/list: X-Tenant header %q on %s", h, tr)
				}
				zone := client.WithCallMeta(map[string]any{"com.example/zone": "us"})
				if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}, zone); err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				got = lastReceived(t, f.srv, protocol.MethodToolsCall)
				checkMeta(t, got.Params, "com.example/tenant", `"acme"`, modern)
				checkMeta(t, got.Params, "com.example/zone", `"us"`, modern)
				if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "y"}); err != nil {
					t.Fatalf("CallTool: %v", err)
				}
				got = lastReceived(t, f.srv, protocol.MethodToolsCall)
				checkMeta(t, got.Params, "com.example/zone", `"eu"`, modern)
				if h := got.Headers.Get("X-Tenant"); (tr == tHTTP) != (h == "acme") {
					t.Errorf("tools/call: X-Tenant header %q on %s", h, tr)
				}
			})
		}
	}
}

// TestCallDefaultsRefusePerCallState: WithReplayed and WithProgress carry
// one call's state; given to WithCallDefaults they make Connect and Dial
// fail with an *Error of kind invalid naming the option, and so does a
// default that cannot apply.
func TestCallDefaultsRefusePerCallState(t *testing.T) {
	var replayed bool
	cases := []struct {
		opt  client.CallOption
		name string
	}{
		{client.WithReplayed(&replayed), "WithReplayed"},
		{client.WithProgress(func(protocol.ProgressParams) {}), "WithProgress"},
		{client.WithCallMeta(map[string]any{protocol.MetaProtocolVersion: "1999-01-01"}), "WithCallDefaults"},
	}
	for _, tc := range cases {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(tc.name+"/"+tr, func(t *testing.T) {
				_, err := tryConnect(t, tr, testserver.Options{}, client.WithCallDefaults(client.WithTimeout(time.Minute), tc.opt))
				ce, ok := errors.AsType[*client.Error](err)
				if !ok || ce.Kind != client.KindInvalid || ce.Op != "connect" || !strings.Contains(err.Error(), tc.name) {
					t.Fatalf("connect = %v, want an *Error of kind invalid naming %s", err, tc.name)
				}
			})
		}
	}
}

// TestProtocolStrings: a Protocol is its own string, the mode's name or
// the pinned version.
func TestProtocolStrings(t *testing.T) {
	for p, want := range map[client.Protocol]string{client.Auto: "auto", client.Modern: "modern", client.Legacy: "legacy",
		client.Pin(protocol.Version20250618): "2025-06-18"} {
		if string(p) != want || fmt.Sprint(p) != want {
			t.Errorf("Protocol %q prints %q, want %q", string(p), fmt.Sprint(p), want)
		}
	}
}

// TestPinOfAModeIsRefused: Pin of a mode's name is not a version and is
// refused as any unknown version is (kind invalid, matching
// ErrNoCommonVersion), while the zero Protocol selects Auto.
func TestPinOfAModeIsRefused(t *testing.T) {
	for _, v := range []string{"auto", "modern", "legacy", ""} {
		_, err := tryConnect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Pin(v)))
		ce, ok := errors.AsType[*client.Error](err)
		if !ok || ce.Kind != client.KindInvalid || !errors.Is(err, client.ErrNoCommonVersion) || !strings.Contains(err.Error(), `"`+v+`"`) {
			t.Errorf("Pin(%q): connect = %v, want an *Error of kind invalid matching ErrNoCommonVersion naming %q", v, err, v)
		}
	}
	f := connect(t, tPipe, testserver.Options{Era: testserver.LegacyOnly}, client.WithProtocol(""))
	n := f.c.Negotiated()
	if n.Era != negotiation.EraLegacy || len(n.Trace) == 0 || n.Trace[0].Step != "probe" {
		t.Errorf("WithProtocol(\"\"): era %v, trace %+v; want Auto's probe, then legacy", n.Era, n.Trace)
	}
}
