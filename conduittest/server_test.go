package conduittest_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
	"go.uber.org/goleak"

	"github.com/conduitmcp/conduit/internal/leakcheck"
)

func TestMain(m *testing.M) {
	conduittest.ServeIfSpawned()
	goleak.VerifyTestMain(leakcheck.Flushing(m))
}

const watchdog = 30 * time.Second

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), watchdog)
	t.Cleanup(cancel)
	return ctx
}

// dial connects to srv over the named transport.
func dial(t *testing.T, srv *conduittest.Server, via string, opts ...client.Option) (*client.Client, error) {
	t.Helper()
	ctx := testCtx(t)
	switch via {
	case "memory":
		return client.Connect(ctx, srv.Transport(), opts...)
	case "stdio":
		return client.Connect(ctx, srv.Command(t), opts...)
	case "http":
		return client.Dial(ctx, srv.URL(), opts...)
	case "websocket":
		return client.Dial(ctx, srv.WebSocketURL(), opts...)
	case "sse":
		return client.Connect(ctx, &transport.SSE{URL: srv.SSEURL()}, opts...)
	}
	t.Fatalf("unknown transport %q", via)
	return nil, nil
}

// connect returns a client of srv over the named transport, closed with
// the test.
func connect(t *testing.T, srv *conduittest.Server, via string, opts ...client.Option) *client.Client {
	t.Helper()
	c, err := dial(t, srv, via, opts...)
	if err != nil {
		t.Fatalf("connect over %s: %v", via, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTransportsAndEras connects the public client over every transport
// to a server of every era and checks the era negotiated and what the
// server recorded.
func TestTransportsAndEras(t *testing.T) {
	wantEra := map[conduittest.Era]negotiation.Era{
		conduittest.Both: negotiation.EraModern, conduittest.Modern: negotiation.EraModern, conduittest.Legacy: negotiation.EraLegacy,
	}
	wantTransport := map[string]string{"memory": "stdio", "stdio": "stdio", "http": "http", "websocket": "websocket", "sse": "sse"}
	for _, era := range []conduittest.Era{conduittest.Both, conduittest.Modern, conduittest.Legacy} {
		for _, via := range []string{"memory", "stdio", "http", "websocket", "sse"} {
			if via == "sse" && era == conduittest.Modern {
				continue // HTTP+SSE is a legacy transport
			}
			t.Run(era.String()+"/"+via, func(t *testing.T) {
				srv := conduittest.NewServer(t, conduittest.WithEra(era))
				c := connect(t, srv, via)
				want := wantEra[era]
				if via == "sse" {
					want = negotiation.EraLegacy
				}
				if c.Negotiated().Era != want {
					t.Errorf("era = %v, want %v", c.Negotiated().Era, want)
				}
				res, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "hi " + via})
				if err != nil || res.Text() != "hi "+via {
					t.Fatalf("echo = %v, %v", res, err)
				}
				if n := srv.Count("tools/call"); n != 1 {
					t.Errorf("Count(tools/call) = %d, want 1 (counts %v)", n, srv.Counts())
				}
				m, err := srv.WaitReceived(testCtx(t), "tools/call")
				if err != nil {
					t.Fatal(err)
				}
				if m.Transport != wantTransport[via] || !strings.Contains(string(m.Params), "hi "+via) {
					t.Errorf("recorded %s %s, want transport %s", m.Transport, m.Params, wantTransport[via])
				}
			})
		}
	}
}

// host implements every client capability the server exercises.
type host struct {
	mu   sync.Mutex
	logs []string
}

func (h *host) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{Role: "assistant", Model: "test-model", Content: []byte(`{"type":"text","text":"Paris"}`)}, nil
}

func (h *host) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
}

func (h *host) ListRoots(ctx context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///work"}}, nil
}

func (h *host) OnLog(ctx context.Context, p *protocol.LoggingMessageParams) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.logs = append(h.logs, string(p.Level)+" "+string(p.Data))
}

// TestClientCapabilities exercises sampling, elicitation, roots, progress,
// logging, tasks and subscriptions in both eras.
func TestClientCapabilities(t *testing.T) {
	for _, era := range []conduittest.Era{conduittest.Modern, conduittest.Legacy} {
		for _, via := range []string{"memory", "http"} {
			t.Run(era.String()+"/"+via, func(t *testing.T) {
				testCapabilities(t, era, via)
			})
		}
	}
}

func testCapabilities(t *testing.T, era conduittest.Era, via string) {
	srv := conduittest.NewServer(t, conduittest.WithEra(era))
	h := &host{}
	c := connect(t, srv, via, client.WithHandler(h), client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	ctx := testCtx(t)
	for tool, want := range map[string]string{"sample": "test-model said: Paris", "ask_user": "Hello, Ada!", "roots": "file:///work"} {
		res, err := c.CallTool(ctx, tool, map[string]any{})
		if err != nil || res.Text() != want {
			t.Errorf("%s = %v, %v; want %q", tool, res, err, want)
		}
	}
	var progress []float64
	if _, err := c.CallTool(ctx, "slow", map[string]any{"steps": 3}, client.WithProgress(func(p protocol.ProgressParams) {
		progress = append(progress, p.Progress)
	})); err != nil || len(progress) != 3 {
		t.Errorf("slow: progress %v, err %v; want 3 updates", progress, err)
	}
	if err := c.SetLogLevel(ctx, protocol.LevelInfo); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "log", map[string]any{"level": "warning", "message": "careful"}); err != nil {
		t.Fatal(err)
	}
	task, _, err := c.StartTool(ctx, "task", map[string]any{"steps": 1})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := c.AwaitTask(ctx, task); err != nil || res.Failed() {
		t.Errorf("task = %v, %v", res, err)
	}
	sub, err := c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true, Resources: []string{"file:///hello.txt"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	srv.NotifyResourceUpdated("file:///hello.txt")
	select {
	case ev := <-sub.Events():
		if ev.URI != "file:///hello.txt" {
			t.Errorf("event %+v", ev)
		}
	case <-ctx.Done():
		t.Fatal("no resource update")
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.logs) != 1 || h.logs[0] != `warning "careful"` {
		t.Errorf("logs %q", h.logs)
	}
}

// TestFaultsTable checks that every fault kind is listed, described and
// valid, and that a bad fault fails New.
func TestFaultsTable(t *testing.T) {
	faults := conduittest.Faults()
	if len(faults) != 22 {
		t.Errorf("%d fault kinds, want 22", len(faults))
	}
	seen := map[conduittest.Fault]bool{}
	for _, f := range faults {
		if f.Description == "" || f.Method == "" || seen[f.Fault] {
			t.Errorf("fault %+v: missing description or method, or listed twice", f)
		}
		seen[f.Fault] = true
		if err := f.Fault.Validate(); err != nil {
			t.Error(err)
		}
	}
	for _, f := range []conduittest.Fault{
		conduittest.FaultResult, conduittest.FaultDiscoverInvalid, conduittest.FaultDiscoverNotShaped,
		conduittest.FaultDiscoverNoMutual, conduittest.FaultRPCError, conduittest.FaultUnsupportedVersion,
		conduittest.FaultMissingCapability, conduittest.FaultHeaderMismatch, conduittest.FaultSilent,
		conduittest.FaultLegacyVersion, conduittest.FaultRepeatCursor, conduittest.FaultOversized,
		conduittest.FaultExit, conduittest.FaultExitAfter, conduittest.FaultNoise, conduittest.FaultHTTPStatus, conduittest.FaultReset,
		conduittest.FaultBreakStream, conduittest.FaultRespondSSE, conduittest.FaultRespondJSON,
		conduittest.FaultExpireSession, conduittest.FaultBreakExpire,
	} {
		if !seen[f] {
			t.Errorf("constant %q is not in Faults()", f)
		}
	}
	if _, err := conduittest.New(conduittest.WithFaults("no-such-fault")); err == nil || !strings.Contains(err.Error(), "no-such-fault") {
		t.Errorf("New with a bad fault: %v", err)
	}
	if err := conduittest.FaultRPCError.With("code", "x").Validate(); err == nil {
		t.Error("rpc-error:code=x validated")
	}
	if got := conduittest.FaultSilent.On("tools/call").Times(1); got != "silent:method=tools/call,times=1" {
		t.Errorf("builder = %q", got)
	}
}

// TestFaultValuesOutOfRange checks that a fault whose size or status
// the server cannot produce is refused when it is parsed: a size past
// what a string holds made the server panic (crashing the test binary),
// a status outside 100-999 made net/http's WriteHeader panic.
func TestFaultValuesOutOfRange(t *testing.T) {
	for _, f := range []conduittest.Fault{
		conduittest.FaultOversized.With("size", "9223372036854775807"),
		conduittest.FaultOversized.With("size", "1073741825"),
		conduittest.FaultHTTPStatus.With("status", "42"),
		conduittest.FaultHTTPStatus.With("status", "1000"),
		conduittest.FaultRPCError.With("status", "-1"),
	} {
		if err := f.Validate(); err == nil {
			t.Errorf("%q validated", f)
		}
		if _, err := conduittest.New(conduittest.WithFaults(f)); err == nil {
			t.Errorf("New with %q: no error", f)
		}
	}
	for _, f := range []conduittest.Fault{
		conduittest.FaultOversized.With("size", "1073741824"),
		conduittest.FaultOversized.With("size", "0"),
		conduittest.FaultHTTPStatus.With("status", "100"),
		conduittest.FaultHTTPStatus.With("status", "999"),
		conduittest.FaultHTTPStatus.With("status", "0"),
	} {
		if err := f.Validate(); err != nil {
			t.Errorf("%q: %v", f, err)
		}
	}
}

// TestFaultsApply checks a few faults through the public client.
func TestFaultsApply(t *testing.T) {
	srv := conduittest.NewServer(t, conduittest.WithFaults(conduittest.FaultRPCError.On("tools/call").With("code", "-32042").Times(1)))
	c := connect(t, srv, "memory")
	ctx := testCtx(t)
	_, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"})
	if code, ok := jsonrpc.Code(err); !ok || code != -32042 {
		t.Errorf("first call: %v, want -32042", err)
	}
	if _, err := c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("second call: %v", err)
	}
	if hits := srv.FaultHits(); len(hits) != 1 || hits[0] != 1 {
		t.Errorf("hits %v", hits)
	}
	// Exit on stdio: the subprocess exits, the call fails with the exit.
	if err := srv.SetFaults(conduittest.FaultExit.On("tools/call")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, srv, "stdio")
	_, err = cs.CallTool(ctx, "echo", map[string]any{"text": "x"})
	var ee *transport.ExitError
	if !errors.As(err, &ee) || !strings.Contains(ee.Error(), "code 3") {
		t.Errorf("call on an exiting stdio server: %v, want the process's exit with code 3", err)
	}
}

// TestOptions checks WithVersions and WithPageSize through the client.
func TestOptions(t *testing.T) {
	srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy), conduittest.WithVersions("2025-06-18"), conduittest.WithPageSize(2))
	c := connect(t, srv, "memory")
	if v := c.Negotiated().Version; v != "2025-06-18" {
		t.Errorf("protocol version %s, want 2025-06-18", v)
	}
	n := 0
	for _, err := range c.Tools(testCtx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if pages := srv.Count("tools/list"); pages != (n+1)/2 {
		t.Errorf("%d tools in %d pages, want pages of 2", n, pages)
	}
}

// TestEveryFaultFires installs each fault kind of the table through the
// public API and drives a client at it until the fault has applied.
func TestEveryFaultFires(t *testing.T) {
	for _, info := range conduittest.Faults() {
		t.Run(string(info.Fault), func(t *testing.T) {
			f, era, via := info.Fault, conduittest.Both, "memory"
			switch {
			case strings.HasPrefix(info.Description, "HTTP:"):
				via = "http"
			case info.Fault == conduittest.FaultExit:
				via = "stdio"
			}
			switch info.Fault {
			case conduittest.FaultLegacyVersion, conduittest.FaultExpireSession:
				era = conduittest.Legacy
			case conduittest.FaultResult:
				f = f.With("result", `{"resultType":"complete","content":[{"type":"text","text":"canned"}]}`)
			}
			if info.Method == "server/discover" || info.Method == "*" {
				f = f.On("tools/call") // let the session start
			}
			srv := conduittest.NewServer(t, conduittest.WithEra(era), conduittest.WithFaults(f.Times(1)))
			ctx, cancel := context.WithTimeout(testCtx(t), 5*time.Second)
			defer cancel()
			c, err := dial(t, srv, via, client.WithRetry(client.RetryPolicy{ProbeTimeout: 10 * time.Second}), client.WithCallDefaults(client.WithIdleTimeout(time.Second)))
			if err == nil {
				defer c.Close()
				for _, err := range c.Tools(ctx) {
					if err != nil {
						break
					}
				}
				_, _ = c.CallTool(ctx, "echo", map[string]any{"text": "x"})
			}
			if hits := srv.FaultHits(); hits[0] != 1 {
				t.Errorf("fault %s applied %d times (connect error %v), want 1", f, hits[0], err)
			}
		})
	}
}

// TestFaultDefaults: the faults whose parameters have documented
// defaults apply them when the parameter is left out: legacy-version
// answers initialize with 2024-11-05, oversized pads a response to at
// least 1 MiB.
func TestFaultDefaults(t *testing.T) {
	t.Run("legacy-version", func(t *testing.T) {
		srv := conduittest.NewServer(t, conduittest.WithEra(conduittest.Legacy), conduittest.WithFaults(conduittest.FaultLegacyVersion))
		c := connect(t, srv, "memory", client.WithProtocol(client.Legacy), client.WithOlderVersions(true))
		if v := c.Negotiated().Version; v != "2024-11-05" {
			t.Errorf("protocol version %s, want the default 2024-11-05", v)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		srv := conduittest.NewServer(t, conduittest.WithFaults(conduittest.FaultOversized.On("tools/call")))
		var size atomic.Int64
		c := connect(t, srv, "memory", client.WithMessageLog(func(sent bool, msg jsonrpc.Message) {
			if r, ok := msg.(*jsonrpc.Response); ok && !sent {
				if b, err := json.Marshal(r); err == nil {
					size.Store(max(size.Load(), int64(len(b))))
				}
			}
		}))
		if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		if n := size.Load(); n < 1<<20 {
			t.Errorf("largest response %d bytes, want at least the default 1 MiB", n)
		}
	})
}
