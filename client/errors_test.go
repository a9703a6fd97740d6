package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// errCase is one real failure and what the *client.Error must say.
type errCase struct {
	name string
	run  func(t *testing.T) error
	op   string
	kind client.Kind
	// also is an extra check of the cause (errors.Is/As to the layers
	// below, the sentinels of package client).
	also func(error) bool
	// text, when set, is a regular expression the whole message matches
	// (the shapes the package documentation shows).
	text string
}

// refusedURL returns an http URL on 127.0.0.1 where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

func isAs[T error](err error) bool {
	_, ok := errors.AsType[T](err)
	return ok
}

// connectErrCases are failures of Connect and Dial.
func connectErrCases() []errCase {
	cases := []errCase{
		{name: "refused port", op: "connect", kind: client.KindNetwork,
			run: func(t *testing.T) error {
				_, err := client.Dial(testCtx(t), refusedURL(t), client.WithProtocol(client.Modern))
				return err
			},
			text: `client: connect: negotiating protocol \(modern\): retries exhausted \(network\): POST http://127\.0\.0\.1:\d+/mcp: dial tcp 127\.0\.0\.1:\d+: connect: connection refused`,
			also: isAs[*transport.NetworkError]},
		{name: "refused port websocket", op: "connect", kind: client.KindNetwork,
			run: func(t *testing.T) error {
				_, err := client.Dial(testCtx(t), "ws"+strings.TrimPrefix(refusedURL(t), "http"))
				return err
			}},
		{name: "missing executable", op: "connect", kind: client.KindProcess,
			run: func(t *testing.T) error {
				_, err := client.Connect(testCtx(t), transport.Command("conduit-no-such-program-xyz"))
				return err
			},
			also: func(err error) bool {
				return errors.Is(err, exec.ErrNotFound) && strings.Contains(err.Error(), "executable file not found")
			}},
		{name: "process exits", op: "connect", kind: client.KindProcess,
			run: func(t *testing.T) error {
				_, err := client.Connect(testCtx(t), transport.Command("sh", "-c", "exit 3"))
				return err
			},
			// An *transport.ExitError when the exit is seen first, else the
			// failed write; both match transport.ErrClosed.
			also: func(err error) bool { return errors.Is(err, transport.ErrClosed) }},
		{name: "unknown pinned version", op: "connect", kind: client.KindInvalid,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Pin("2000-01-01")))
				return err
			},
			also: func(err error) bool { return errors.Is(err, client.ErrNoCommonVersion) }},
		{name: "bad scheme", op: "connect", kind: client.KindInvalid,
			run: func(t *testing.T) error {
				_, err := client.Dial(testCtx(t), "ftp://127.0.0.1/")
				return err
			}},
		{name: "modern client, legacy server", op: "connect", kind: client.KindNegotiation,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tPipe, testserver.Options{Era: testserver.LegacyOnly}, client.WithProtocol(client.Modern))
				return err
			},
			also: func(err error) bool {
				ne, ok := errors.AsType[*engine.NegotiationError](err)
				return ok && len(ne.Trace) > 0 && !errors.Is(err, client.ErrNoCommonVersion)
			}},
		{name: "legacy client, modern server", op: "connect", kind: client.KindNegotiation,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tPipe, testserver.Options{Era: testserver.ModernOnly}, client.WithProtocol(client.Legacy))
				return err
			},
			also: isAs[*jsonrpc.Error]},
		{name: "no common version/modern", op: "connect", kind: client.KindNegotiation,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tPipe, testserver.Options{Era: testserver.ModernOnly,
					Faults: []testserver.Fault{{Kind: testserver.FaultUnsupportedVersion, Supported: []string{"2099-01-01"}}}},
					client.WithProtocol(client.Modern))
				return err
			},
			also: func(err error) bool {
				return errors.Is(err, client.ErrNoCommonVersion) && isAs[*negotiation.UnsupportedProtocolVersionError](err)
			}},
		{name: "no common version/legacy", op: "connect", kind: client.KindNegotiation,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tPipe, testserver.Options{Era: testserver.LegacyOnly,
					Faults: []testserver.Fault{{Kind: testserver.FaultLegacyVersion, Version: "1999-01-01"}}},
					client.WithProtocol(client.Legacy))
				return err
			},
			also: func(err error) bool { return errors.Is(err, client.ErrNoCommonVersion) }},
		{name: "canceled", op: "connect", kind: client.KindCanceled,
			run: func(t *testing.T) error {
				ctx, cancel := context.WithCancel(context.Background())
				cancel()
				_, err := client.Dial(ctx, refusedURL(t))
				return err
			},
			also: func(err error) bool { return errors.Is(err, context.Canceled) }},
	}
	for _, era := range allEras {
		cases = append(cases, errCase{name: "401/" + era.name, op: "connect", kind: client.KindAuth,
			run: func(t *testing.T) error {
				_, err := tryConnect(t, tHTTP, testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultHTTPStatus, Method: "*", Status: 401,
					Header: http.Header{"Www-Authenticate": {`Bearer realm="mcp"`}}}}}, client.WithProtocol(era.p))
				return err
			},
			also: func(err error) bool {
				ae, ok := errors.AsType[*engine.AuthRequiredError](err)
				return ok && ae.Status == 401 && errors.Is(err, client.ErrAuthRequired)
			}})
	}
	return cases
}

// callErrCases are failures of requests on a connected client, in era p.
func callErrCases(name string, p client.Protocol) []errCase {
	call := func(t *testing.T, tr string, so testserver.Options, tool string, args any, opts ...client.CallOption) error {
		f := connect(t, tr, so, client.WithProtocol(p))
		_, err := f.c.CallTool(testCtx(t), tool, args, opts...)
		return err
	}
	closed := func(t *testing.T) *client.Client {
		f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(p))
		f.c.Close()
		return f.c
	}
	isClosed := func(err error) bool { return errors.Is(err, client.ErrClosed) }
	return []errCase{
		{name: "server error/" + name, op: "tools/call", kind: client.KindServer,
			run: func(t *testing.T) error {
				return call(t, tPipe, testserver.Options{}, "rpc_error", map[string]any{"code": -32000})
			},
			also: func(err error) bool {
				re, ok := errors.AsType[*jsonrpc.Error](err)
				return ok && re.Code == -32000
			}},
		{name: "unknown tool is the server's invalid params/" + name, op: "tools/call", kind: client.KindServer,
			run:  func(t *testing.T) error { return call(t, tPipe, testserver.Options{}, "no_such_tool", nil) },
			also: func(err error) bool { return errors.Is(err, jsonrpc.ErrInvalidParams) }},
		{name: "timeout/" + name, op: "tools/call", kind: client.KindTimeout,
			run: func(t *testing.T) error {
				return call(t, tPipe, testserver.Options{}, "slow", map[string]any{"steps": 100, "delayMs": 100}, client.WithTimeout(20*time.Millisecond))
			},
			also: isAs[*engine.RequestTimeoutError]},
		{name: "canceled/" + name, op: "tools/call", kind: client.KindCanceled,
			run: func(t *testing.T) error {
				f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(p))
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				time.AfterFunc(20*time.Millisecond, cancel)
				_, err := f.c.CallTool(ctx, "slow", map[string]any{"steps": 100, "delayMs": 100})
				return err
			},
			also: func(err error) bool { return errors.Is(err, context.Canceled) }},
		{name: "closed/" + name, op: "tools/list", kind: client.KindClosed,
			run: func(t *testing.T) error {
				for _, err := range closed(t).Tools(testCtx(t)) {
					return err
				}
				return nil
			},
			also: isClosed},
		{name: "subscribe on a closed client/" + name, op: "subscribe", kind: client.KindClosed,
			run: func(t *testing.T) error {
				_, err := closed(t).Subscribe(testCtx(t), client.SubscribeOptions{ToolsListChanged: true})
				return err
			},
			also: isClosed},
		{name: "arguments not an object/" + name, op: "tools/call", kind: client.KindInvalid,
			run:  func(t *testing.T) error { return call(t, tPipe, testserver.Options{}, "echo", []int{1, 2}) },
			also: isAs[*handler.ValidationError]},
		{name: "handler json-rpc error/" + name, op: "tools/call", kind: client.KindHandler,
			run: func(t *testing.T) error {
				denied := handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					return nil, jsonrpc.NewError(1001, "declined")
				})
				f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(p), client.WithHandler(denied))
				_, err := f.c.CallTool(testCtx(t), "sample", map[string]any{})
				return err
			},
			also: func(err error) bool {
				re, ok := errors.AsType[*jsonrpc.Error](err)
				return isAs[*engine.InputError](err) && ok && re.Code == 1001
			}},
		{name: "elicitation answer off its schema/" + name, op: "tools/call", kind: client.KindInvalid,
			run: func(t *testing.T) error {
				wrong := handler.ElicitorFunc(func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
					return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": 42}}, nil
				})
				f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(p), client.WithHandler(wrong))
				_, err := f.c.CallTool(testCtx(t), "ask_user", map[string]any{})
				return err
			},
			also: func(err error) bool { return isAs[*handler.ValidationError](err) && isAs[*engine.InputError](err) }},
		{name: "process exit/" + name, op: "tools/call", kind: client.KindProcess,
			run: func(t *testing.T) error {
				return call(t, tStdio, testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultExit, Method: "tools/call"}}},
					"echo", map[string]any{"text": "x"}, client.WithReplay(client.ReplayNone))
			},
			// The process went away: not a closed client.
			also: func(err error) bool { return errors.Is(err, transport.ErrClosed) && !errors.Is(err, client.ErrClosed) },
			text: `client: tools/call: outcome unknown, the server may have executed the request \((the connection was lost|the stdio process exited) after the request was written; not sent again: the replay policy is none\): connection lost: (server process ".+" exited with code 3|connection closed: server ".+" closed its stdout)`},
	}
}

// TestErrorKinds: every failure Connect, Dial and the calls return is an
// *client.Error whose Op and Kind tell the truth, and errors.Is/As still
// reach the typed errors of the layers below.
func TestErrorKinds(t *testing.T) {
	cases := connectErrCases()
	for _, era := range allEras {
		cases = append(cases, callErrCases(era.name, era.p)...)
	}
	cases = append(cases, modernOnlyErrCases()...)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.run(t)
			ce, ok := errors.AsType[*client.Error](err)
			if !ok {
				t.Fatalf("error %v (%T) is not a *client.Error", err, err)
			}
			if ce.Kind != tc.kind || ce.Op != tc.op {
				t.Errorf("got Op %q Kind %v, want Op %q Kind %v; error: %v", ce.Op, ce.Kind, tc.op, tc.kind, err)
			}
			if !strings.HasPrefix(err.Error(), "client: "+tc.op+": ") {
				t.Errorf("message %q does not start with the op", err)
			}
			checkErrorText(t, err, tc.op)
			if tc.text != "" && !regexp.MustCompile("^"+tc.text+"$").MatchString(err.Error()) {
				t.Errorf("message %q does not match %q", err, tc.text)
			}
			if tc.also != nil && !tc.also(err) {
				t.Errorf("error %v: the cause check failed", err)
			}
			// The sentinels are matched through Err's chain, and each
			// kind that has one matches it.
			for _, s := range sentinels {
				if errors.Is(err, s) != errors.Is(ce.Err, s) {
					t.Errorf("errors.Is(err, %v) = %v but errors.Is(err.Err, …) = %v", s, errors.Is(err, s), errors.Is(ce.Err, s))
				}
			}
			if s, ok := kindSentinel[ce.Kind]; ok && !errors.Is(err, s) {
				t.Errorf("an *Error of kind %v does not match %v: %v", ce.Kind, s, err)
			}
		})
	}
}

// internalNames are package names a user cannot open (or that only
// repeat where the failure was met): no error text shows them.
var internalNames = []string{"session:", "engine:", "negotiation:", "transport:", "client: client:"}

// checkErrorText checks the rule of the package documentation: one line,
// the operation once, no internal package name.
func checkErrorText(t *testing.T, err error, op string) {
	t.Helper()
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("message is not one line:\n%s", msg)
	}
	if n := strings.Count(msg, op); op != "connect" && n != 1 {
		t.Errorf("message names %s %d times, want once: %s", op, n, msg)
	}
	for _, name := range internalNames {
		if strings.Contains(msg, name) {
			t.Errorf("message shows %q: %s", name, msg)
		}
	}
}

// sentinels are the sentinels of package client.
var sentinels = []error{client.ErrClosed, client.ErrOutcomeUnknown, client.ErrAuthRequired, client.ErrNoCommonVersion, client.ErrNotSupported}

// kindSentinel is the sentinel every *Error of a kind matches.
var kindSentinel = map[client.Kind]error{client.KindClosed: client.ErrClosed, client.KindAuth: client.ErrAuthRequired,
	client.KindUnsupported: client.ErrNotSupported}

// modernOnlyErrCases are failures only the modern era (or its HTTP
// transport) can produce.
func modernOnlyErrCases() []errCase {
	modern := client.WithProtocol(client.Modern)
	return []errCase{
		{name: "missing client capability", op: "tools/call", kind: client.KindUnsupported,
			run: func(t *testing.T) error {
				f := connect(t, tPipe, testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultMissingCapability, Method: "tools/call"}}}, modern)
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
				return err
			},
			also: func(err error) bool {
				return isAs[*engine.MissingCapabilityError](err) && errors.Is(err, jsonrpc.ErrMissingRequiredClientCapability)
			}},
		{name: "connection lost", op: "tools/call", kind: client.KindNetwork,
			run: func(t *testing.T) error {
				f := connect(t, tHTTP, testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultBreakStream, Method: "tools/call"}}}, modern)
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}, client.WithReplay(client.ReplayNone))
				return err
			},
			also: isAs[*engine.ConnectionLostError]},
		{name: "protocol", op: "tools/call", kind: client.KindProtocol,
			run: func(t *testing.T) error {
				f := connect(t, tPipe, testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultResult, Method: "tools/call",
					Result: json.RawMessage(`{"resultType":"bogus"}`)}}}, modern)
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
				return err
			},
			also: isAs[*engine.ProtocolError]},
		{name: "http status", op: "tools/call", kind: client.KindHTTP,
			run: func(t *testing.T) error {
				f := connect(t, tHTTP, testserver.Options{}, modern)
				f.srv.AddFault(testserver.Fault{Kind: testserver.FaultHTTPStatus, Method: "tools/call", Status: http.StatusUnsupportedMediaType,
					ContentType: "text/plain", Body: "no"})
				_, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"})
				return err
			},
			also: func(err error) bool {
				he, ok := errors.AsType[*transport.HTTPError](err)
				return ok && he.StatusCode == http.StatusUnsupportedMediaType && he.Method == http.MethodPost
			}},
		{name: "handler failed", op: "tools/call", kind: client.KindHandler,
			run: func(t *testing.T) error {
				failing := handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
					return nil, errors.New("no model")
				})
				f := connect(t, tPipe, testserver.Options{}, modern, client.WithHandler(failing))
				_, err := f.c.CallTool(testCtx(t), "sample", map[string]any{})
				return err
			},
			also: func(err error) bool {
				return isAs[*engine.InputError](err) && strings.Contains(err.Error(), "no model")
			}},
		{name: "tasks/list not in this era", op: "tasks/list", kind: client.KindUnsupported,
			run: func(t *testing.T) error {
				f := connect(t, tPipe, testserver.Options{}, modern)
				for _, err := range f.c.Tasks(testCtx(t)) {
					return err
				}
				return nil
			},
			also: func(err error) bool { return errors.Is(err, client.ErrNotSupported) }},
	}
}

// TestKindString: every kind has its stable name.
func TestKindString(t *testing.T) {
	want := map[client.Kind]string{client.KindOther: "error", client.KindNetwork: "network", client.KindProcess: "process",
		client.KindAuth: "auth", client.KindServer: "server", client.KindInvalid: "invalid", client.Kind(99): "Kind(99)"}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), s)
		}
	}
}
