package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/transport"
)

// lossFixture is a client whose first tools/call is lost after the server
// received (and ran) it: on stdio the server process exits without
// answering; on HTTP the response stream ends before the response.
type lossFixture struct {
	c      *client.Client
	count  func() int // tools/call requests the server (every process of it) received
	events record[client.ConnEvent]
}

func (f *lossFixture) kinds() []string {
	var ks []string
	for _, ev := range f.events.all() {
		ks = append(ks, ev.Kind)
	}
	return ks
}

func newLossFixture(t *testing.T, tr string, p client.Protocol, opts ...client.Option) *lossFixture {
	t.Helper()
	f := &lossFixture{}
	opts = append([]client.Option{client.WithProtocol(p), client.WithConnEvents(f.events.add)}, opts...)
	switch tr {
	case tStdio:
		dir := t.TempDir()
		countFile := filepath.Join(dir, "count")
		spec, err := json.Marshal(stdioOptions{
			Faults:     []testserver.Fault{{Kind: testserver.FaultExitAfter, Method: "tools/call", Times: 1}},
			FaultsOnce: filepath.Join(dir, "faulted"),
			CountFile:  countFile,
		})
		if err != nil {
			t.Fatal(err)
		}
		cmd := transport.Command(os.Args[0], "-test.run=^$")
		cmd.Env = []string{stdioEnv + "=" + string(spec)}
		f.c, err = client.Connect(testCtx(t), cmd, opts...)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		t.Cleanup(func() { f.c.Close() })
		f.count = func() int {
			b, _ := os.ReadFile(countFile)
			return strings.Count(string(b), "\n")
		}
	case tHTTP:
		fx := connect(t, tHTTP, testserver.Options{
			Faults: []testserver.Fault{{Kind: testserver.FaultBreakStream, Method: "tools/call", Times: 1}},
		}, opts...)
		f.c = fx.c
		f.count = func() int { return count(fx.srv, "tools/call") }
	default:
		t.Fatalf("no loss fixture for %s", tr)
	}
	drainTools(t, f.c) // the tools' annotations are known
	return f
}

// TestReplayPolicy: a request lost after the server ran it is replayed
// only when that is safe (a tool annotated readOnlyHint or
// idempotentHint), or when the client or the call opted in; otherwise
// the caller gets ErrOutcomeUnknown and the server's count proves that
// the tool ran once; the connection heals either way. Stdio (a server
// that dies after running the tool) and HTTP (a broken response stream),
// both eras.
func TestReplayPolicy(t *testing.T) {
	tests := []struct {
		name     string
		tool     string
		args     map[string]any
		opts     []client.Option
		callOpts []client.CallOption
		replayed bool // the call succeeds through a replay
	}{
		{name: "not-idempotent-refused", tool: "echo", args: map[string]any{"text": "charge"}},
		{name: "read-only-replayed", tool: "add", args: map[string]any{"a": 1, "b": 2}, replayed: true},
		{name: "idempotent-replayed", tool: "structured", args: map[string]any{"city": "Oslo"}, replayed: true},
		{name: "opt-in-replays", tool: "echo", args: map[string]any{"text": "x"},
			opts: []client.Option{client.WithCallDefaults(client.WithReplay(client.ReplayAll))}, replayed: true},
		{name: "per-call-opt-in", tool: "echo", args: map[string]any{"text": "x"},
			callOpts: []client.CallOption{client.WithReplay(client.ReplayAll)}, replayed: true},
		{name: "opt-out-never", tool: "add", args: map[string]any{"a": 1, "b": 2},
			opts: []client.Option{client.WithCallDefaults(client.WithReplay(client.ReplayNone))}},
		{name: "per-call-opt-out", tool: "add", args: map[string]any{"a": 1, "b": 2},
			opts:     []client.Option{client.WithCallDefaults(client.WithReplay(client.ReplayAll))},
			callOpts: []client.CallOption{client.WithReplay(client.ReplayNone)}},
	}
	for _, era := range allEras {
		for _, tr := range []string{tStdio, tHTTP} {
			for _, tt := range tests {
				t.Run(era.name+"/"+tr+"/"+tt.name, func(t *testing.T) {
					t.Parallel()
					f := newLossFixture(t, tr, era.p, tt.opts...)
					var replayed bool
					opts := append([]client.CallOption{client.WithReplayed(&replayed)}, tt.callOpts...)
					res, err := f.c.CallTool(testCtx(t), tt.tool, tt.args, opts...)
					if era.p == client.Legacy && tr == tHTTP {
						// A legacy server's stream is resumable: the
						// client resumes it (Last-Event-ID) and gets the
						// answer of the one execution, whatever the policy.
						if err != nil || replayed || f.count() != 1 {
							t.Fatalf("CallTool = %v, replayed %v, count %d; want the resumed answer of one execution", err, replayed, f.count())
						}
						return
					}
					if tt.replayed {
						if err != nil {
							t.Fatalf("CallTool = %v, want a replayed result", err)
						}
						if res.Failed() {
							t.Errorf("result failed: %+v", res)
						}
						if !replayed {
							t.Error("the result is not marked as replayed")
						}
						if n := f.count(); n != 2 {
							t.Errorf("the server received tools/call %d times, want 2", n)
						}
					} else {
						if !errors.Is(err, client.ErrOutcomeUnknown) {
							t.Fatalf("CallTool = %v, want ErrOutcomeUnknown", err)
						}
						if !strings.Contains(err.Error(), "may have executed") {
							t.Errorf("error %q does not say the server may have executed it", err)
						}
						if replayed {
							t.Error("a refused replay is marked as replayed")
						}
						if n := f.count(); n != 1 {
							t.Errorf("the server received tools/call %d times, want 1 (the tool must not run twice)", n)
						}
					}
					// The connection healed: the next call works.
					if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "after"}); err != nil {
						t.Fatalf("the call after the loss = %v, want a healed connection", err)
					}
					want := "replay-refused"
					if tt.replayed {
						want = "replayed"
					}
					waitKind(t, f, want)
					if tr == tStdio {
						waitKind(t, f, "respawned")
					}
				})
			}
		}
	}
}

// waitKind waits for a ConnEvent of kind (events reach the hook from the
// dispatcher, asynchronously).
func waitKind(t *testing.T, f *lossFixture, kind string) {
	t.Helper()
	if eventually(func() bool { return slices.Contains(f.kinds(), kind) }) {
		return
	}
	t.Errorf("no %q event; events: %v", kind, f.kinds())
}

// TestReplayExpiredSession: a legacy HTTP session that expired (HTTP 404)
// never took the request, so even a tool that is not idempotent is sent
// again on the new session, and the replay is reported.
func TestReplayExpiredSession(t *testing.T) {
	var kinds record[string]
	fx := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Legacy),
		client.WithConnEvents(func(ev client.ConnEvent) { kinds.add(ev.Kind) }))
	fx.srv.SetFaults(testserver.Fault{Kind: testserver.FaultExpireSession, Method: "tools/call", Times: 1})
	var replayed bool
	res, err := fx.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}, client.WithReplayed(&replayed))
	if err != nil {
		t.Fatalf("CallTool across an expired session = %v", err)
	}
	if res.Text() != "x" || !replayed {
		t.Errorf("result %q, replayed %v; want the echo through a replay", res.Text(), replayed)
	}
	var got string
	if !eventually(func() bool {
		got = strings.Join(kinds.all(), ",")
		return strings.Contains(got, "replayed") && strings.Contains(got, "reinitialized")
	}) {
		t.Fatalf("events %s; want replayed and reinitialized", got)
	}
	// Even with replays forbidden, the request is sent again: the 404 to
	// its own POST proves that no server took it (the outcome rule,
	// internal/engine/outcome.go), so it runs once.
	fx.srv.SetFaults(testserver.Fault{Kind: testserver.FaultExpireSession, Method: "tools/call", Times: 1})
	before := fx.srv.Executions("echo")
	res, err = fx.c.CallTool(testCtx(t), "echo", map[string]any{"text": "y"}, client.WithReplay(client.ReplayNone))
	if err != nil || res.Text() != "y" {
		t.Fatalf("CallTool under ReplayNone across an expired session = %v, %v; want the echo, re-sent", res, err)
	}
	if n := fx.srv.Executions("echo") - before; n != 1 {
		t.Errorf("echo ran %d times, want 1 (the refused POST never ran it)", n)
	}
}

var _ = context.Background

// TestReplayHTTPFailure: a POST whose answer was an HTTP status that does
// not say the server did not take the request (500), or whose connection
// broke after the request was written (a reset), is sent again only as a
// lost request would be replayed; 503 says the request was not taken, and
// is retried. Both eras; the server's count proves how many times the tool
// reached it.
func TestReplayHTTPFailure(t *testing.T) {
	status := func(code int) testserver.Fault {
		return testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: "tools/call", Status: code, Times: 1}
	}
	reset := testserver.Fault{Kind: testserver.FaultReset, Method: "tools/call", Times: 1}
	tests := []struct {
		name     string
		fault    testserver.Fault
		kind     client.Kind // of the refused call's error
		tool     string
		args     map[string]any
		callOpts []client.CallOption
		retried  bool // the call succeeds through a retry
	}{
		{name: "500-not-idempotent-refused", fault: status(500), kind: client.KindHTTP, tool: "echo", args: map[string]any{"text": "charge"}},
		{name: "500-read-only-retried", fault: status(500), tool: "add", args: map[string]any{"a": 1, "b": 2}, retried: true},
		{name: "500-per-call-opt-in", fault: status(500), tool: "echo", args: map[string]any{"text": "x"},
			callOpts: []client.CallOption{client.WithReplay(client.ReplayAll)}, retried: true},
		{name: "503-not-taken-retried", fault: status(503), tool: "echo", args: map[string]any{"text": "charge"}, retried: true},
		{name: "reset-not-idempotent-refused", fault: reset, kind: client.KindNetwork, tool: "echo", args: map[string]any{"text": "charge"}},
		{name: "reset-idempotent-replayed", fault: reset, tool: "structured", args: map[string]any{"city": "Oslo"}, retried: true},
		{name: "reset-per-call-opt-in", fault: reset, tool: "echo", args: map[string]any{"text": "x"},
			callOpts: []client.CallOption{client.WithReplay(client.ReplayAll)}, retried: true},
		// A success status without a response: taken, may run, and a
		// replay would meet the same, whatever the policy.
		{name: "202-unknown-never-replayed", fault: status(202), kind: client.KindHTTP, tool: "add", args: map[string]any{"a": 1, "b": 2},
			callOpts: []client.CallOption{client.WithReplay(client.ReplayAll)}},
		{name: "204-unknown", fault: status(204), kind: client.KindHTTP, tool: "echo", args: map[string]any{"text": "charge"}},
	}
	for _, era := range allEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := connect(t, tHTTP, testserver.Options{Faults: []testserver.Fault{tt.fault}}, client.WithProtocol(era.p))
				drainTools(t, f.c) // the tools' annotations are known
				_, err := f.c.CallTool(testCtx(t), tt.tool, tt.args, tt.callOpts...)
				want := 1
				if tt.retried {
					want = 2
				}
				if n := count(f.srv, "tools/call"); n != want {
					t.Errorf("tools/call reached the server %d times, want %d", n, want)
				}
				if tt.retried {
					if err != nil {
						t.Fatalf("CallTool = %v, want the retry's result", err)
					}
					return
				}
				var ce *client.Error
				if !errors.As(err, &ce) || ce.Kind != tt.kind || !errors.Is(err, client.ErrOutcomeUnknown) {
					t.Fatalf("CallTool error = %v, want an *Error of kind %v matching ErrOutcomeUnknown", err, tt.kind)
				}
				if _, err := f.c.CallTool(testCtx(t), tt.tool, tt.args); err != nil {
					t.Errorf("the next call: %v", err)
				}
			})
		}
	}
}

// TestReplayPOSTNotWritten: a POST whose connection cannot be made, for a
// reason other than a refused dial (here the dialer's own error, as a
// proxy or a TLS handshake would give), was not written: the call fails
// as not sent, never as an outcome the server may have run, the server
// saw none of it, and, as after a refused dial, it is not sent again at
// once (one dial). On Streamable HTTP in both eras and on HTTP+SSE, whose
// event stream keeps its connection meanwhile.
func TestReplayPOSTNotWritten(t *testing.T) {
	cases := []struct {
		tr, era string
		p       client.Protocol
	}{{tHTTP, "modern", client.Modern}, {tHTTP, "legacy", client.Legacy}, {tSSE, "legacy", client.Legacy}}
	for _, tc := range cases {
		t.Run(tc.tr+"/"+tc.era, func(t *testing.T) {
			t.Parallel()
			var refuse atomic.Bool
			var refused atomic.Int32
			var dialer net.Dialer
			ht := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				if refuse.Load() {
					refused.Add(1)
					return nil, errors.New("test: the proxy refused the connection")
				}
				return dialer.DialContext(ctx, network, addr)
			}}
			t.Cleanup(ht.CloseIdleConnections)
			f := connect(t, tc.tr, testserver.Options{}, client.WithProtocol(tc.p),
				client.WithHTTPClient(&http.Client{Transport: ht}), client.WithCallDefaults(client.WithReplay(client.ReplayAll)))
			drainTools(t, f.c) // a request answered: the legacy initialized too
			refuse.Store(true)
			ht.CloseIdleConnections() // the next POST dials
			_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "charge"})
			if !errors.Is(err, client.ErrNotSent) || errors.Is(err, client.ErrOutcomeUnknown) {
				t.Fatalf("CallTool = %v, want ErrNotSent and not ErrOutcomeUnknown", err)
			}
			if n := count(f.srv, "tools/call"); n != 0 {
				t.Errorf("tools/call reached the server %d times, want 0", n)
			}
			if n := refused.Load(); n != 1 {
				t.Errorf("%d dials for the call, want 1", n)
			}
			refuse.Store(false)
			if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
				t.Errorf("the next call: %v", err)
			}
		})
	}
}

// TestReplayInitializedFailed: a legacy Streamable HTTP server that fails
// notifications/initialized (HTTP 500, twice: its own POST, then the
// re-send before the next request) never saw the call that had to wait
// for it: the call is not counted as possibly run; the session is
// initialized again and the call goes out then, once.
func TestReplayInitializedFailed(t *testing.T) {
	fault := testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: "notifications/initialized", Status: 500, Times: 2}
	f := connect(t, tHTTP, testserver.Options{Faults: []testserver.Fault{fault}}, client.WithProtocol(client.Legacy))
	res, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "charge"})
	if err != nil {
		t.Fatalf("CallTool = %v, want its result after the session was initialized again", err)
	}
	if got := res.Text(); got != "charge" {
		t.Errorf("CallTool = %q, want %q", got, "charge")
	}
	if n := count(f.srv, "tools/call"); n != 1 {
		t.Errorf("tools/call reached the server %d times, want 1", n)
	}
}
