package client_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// olderCase is one older version on one transport of the test server.
type olderCase struct{ version, tr string }

// olderCases are the transports each older version has: 2025-03-26 every
// transport (Streamable HTTP included), 2024-11-05 stdio and HTTP+SSE, its
// HTTP transport (the in-memory pipe stands beside stdio in both).
var olderCases = []olderCase{
	{protocol.Version20250326, tPipe}, {protocol.Version20250326, tStdio}, {protocol.Version20250326, tHTTP},
	{protocol.Version20250326, tWS}, {protocol.Version20250326, tSSE},
	{protocol.Version20241105, tPipe}, {protocol.Version20241105, tStdio}, {protocol.Version20241105, tSSE},
}

func olderServer(version string) testserver.Options {
	return testserver.Options{Era: testserver.LegacyOnly, LegacyVersions: []string{version}}
}

// TestOlderVersionRefusedWithoutOption: by default a server answering
// initialize with 2025-03-26 or 2024-11-05 fails Connect with a typed
// no-common-version error whose message names the option.
func TestOlderVersionRefusedWithoutOption(t *testing.T) {
	for _, oc := range olderCases {
		t.Run(oc.version+"/"+oc.tr, func(t *testing.T) {
			t.Parallel()
			_, err := tryConnect(t, oc.tr, olderServer(oc.version))
			if err == nil {
				t.Fatal("Connect succeeded without WithOlderVersions")
			}
			if !errors.Is(err, client.ErrNoCommonVersion) {
				t.Errorf("err = %v; want one matching ErrNoCommonVersion", err)
			}
			ne, ok := errors.AsType[*negotiation.Error](err)
			if !ok || ne.Kind != negotiation.KindNoCommonVersion {
				t.Errorf("err = %v; want a *negotiation.Error of kind no common version", err)
			}
			if !strings.Contains(err.Error(), "client.WithOlderVersions") || !strings.Contains(err.Error(), oc.version) {
				t.Errorf("err = %q; want it to name the option and %s", err, oc.version)
			}
		})
	}
}

// TestOlderVersionsOnRequest: with the option the client speaks each
// older version, on each of its transports, and handles what it lacks:
// no structured content (CallToolAs reads the text block), no elicitation
// (an elicitation/create is refused with -32601 and the handler is never
// called).
func TestOlderVersionsOnRequest(t *testing.T) {
	for _, oc := range olderCases {
		t.Run(oc.version+"/"+oc.tr, func(t *testing.T) {
			t.Parallel()
			var elicited atomic.Int32
			h := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				elicited.Add(1)
				return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "x"}}, nil
			}}
			f := connect(t, oc.tr, olderServer(oc.version), client.WithOlderVersions(true), client.WithHandler(h))
			c, ctx := f.c, testCtx(t)
			if c.Negotiated().Version != oc.version || c.Negotiated().Era != negotiation.EraLegacy {
				t.Fatalf("ProtocolVersion, Era = %q, %v; want %s, legacy", c.Negotiated().Version, c.Negotiated().Era, oc.version)
			}
			for tool, err := range c.Tools(ctx) {
				if err != nil {
					t.Fatalf("Tools: %v", err)
				}
				if len(tool.OutputSchema) != 0 || tool.Title != "" {
					t.Errorf("tool %s has an outputSchema or title at %s", tool.Name, oc.version)
				}
			}
			sum, res, err := client.CallToolAs[float64](ctx, c, "add", map[string]any{"a": 1, "b": 2})
			if err != nil || sum != 3 || len(res.StructuredContent) != 0 {
				t.Errorf("CallToolAs(add) = %v, %+v, %v; want 3 from the text block", sum, res, err)
			}
			res, err = c.CallTool(ctx, "ask_user", map[string]any{})
			if err == nil && !res.Failed() {
				t.Errorf("ask_user at %s = %+v; want the elicitation refused", oc.version, res)
			}
			if err != nil && !strings.Contains(err.Error(), "not part of protocol version") {
				t.Errorf("ask_user err = %v; want the client's refusal", err)
			}
			if n := elicited.Load(); n != 0 {
				t.Errorf("the Elicitor was called %d times at %s", n, oc.version)
			}
		})
	}
}

// TestOlderBatch: a 2025-03-26 server's JSON-RPC batch (a log notification
// and a ping request in one array) is decoded on every transport: the
// notification reaches the listener, the ping is answered, and the call
// that made the server send it completes.
func TestOlderBatch(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP, tWS, tSSE} {
		t.Run(tr, func(t *testing.T) {
			t.Parallel()
			logs := make(chan string, 4)
			h := handler.Funcs{OnLog: func(_ context.Context, p *protocol.LoggingMessageParams) {
				logs <- string(p.Data)
			}}
			f := connect(t, tr, olderServer(protocol.Version20250326), client.WithOlderVersions(true), client.WithHandler(h))
			ctx := testCtx(t)
			var got struct{ Pong bool }
			if err := f.c.Call(ctx, testserver.MethodBatch, map[string]any{}, &got); err != nil || !got.Pong {
				t.Fatalf("Call(%s) = %+v, %v; want pong", testserver.MethodBatch, got, err)
			}
			select {
			case d := <-logs:
				if d != `"batched"` {
					t.Errorf("log data = %s; want \"batched\"", d)
				}
			case <-ctx.Done():
				t.Fatal("the batched notification never reached the listener")
			}
		})
	}
}

// Test20241105NeedsHTTPSSE: 2024-11-05 has no Streamable HTTP; a Streamable
// HTTP server answering initialize with it is refused even with the
// option, with a typed error that says so.
func Test20241105NeedsHTTPSSE(t *testing.T) {
	_, err := tryConnect(t, tHTTP, olderServer(protocol.Version20241105), client.WithOlderVersions(true))
	if !errors.Is(err, client.ErrNoCommonVersion) || !strings.Contains(err.Error(), "HTTP+SSE") {
		t.Fatalf("err = %v; want a no-common-version error naming HTTP+SSE", err)
	}
}

// TestPinOlderVersion: Pin of an older version needs the option.
func TestPinOlderVersion(t *testing.T) {
	pin := client.WithProtocol(client.Pin(protocol.Version20250326))
	_, err := tryConnect(t, tPipe, olderServer(protocol.Version20250326), pin)
	if !errors.Is(err, client.ErrNoCommonVersion) || !strings.Contains(err.Error(), "client.WithOlderVersions") {
		t.Fatalf("pinned without the option: err = %v; want ErrNoCommonVersion naming the option", err)
	}
	f := connect(t, tPipe, olderServer(protocol.Version20250326), pin, client.WithOlderVersions(true))
	if v := f.c.Negotiated().Version; v != protocol.Version20250326 {
		t.Errorf("pinned ProtocolVersion = %q", v)
	}
	// A pin is exact: a server answering another older version fails.
	if _, err := tryConnect(t, tPipe, olderServer(protocol.Version20241105), pin, client.WithOlderVersions(true)); !errors.Is(err, client.ErrNoCommonVersion) {
		t.Errorf("pinned 2025-03-26 against a 2024-11-05 server: err = %v", err)
	}
}
