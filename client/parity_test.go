package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// Issue 14, "one behaviour in both eras": the same handler failure reaches
// the caller with the same error kind and text in both eras, and in the
// legacy era the server receives the handler's *jsonrpc.Error code (else
// -32603 with the handler's message).

// parityEnv makes the test binary a stdio test server (both eras) that
// writes every message it received, as JSON testserver.Recorded values, to
// the file named by its value once its stdin ends.
const parityEnv = "CONDUIT_CLIENT_TEST_PARITY_RECORD"

func init() {
	// Runs before TestMain: the child never reaches the tests.
	if path := os.Getenv(parityEnv); path != "" {
		os.Exit(serveRecording(path))
	}
}

func serveRecording(path string) int {
	srv := testserver.New(testserver.Options{})
	_ = srv.ServeStream(context.Background(), os.Stdin, os.Stdout)
	srv.Close()
	b, err := json.Marshal(srv.Received())
	if err != nil || os.WriteFile(path, b, 0o600) != nil {
		return 2
	}
	return 0
}

// parityConn is a client connected to a dual-era test server, and a way to
// read what the server received once the client is closed.
type parityConn struct {
	c        *client.Client
	received func(t *testing.T) []testserver.Recorded // closes c first
}

func parityConnect(t *testing.T, tr string, opts ...client.Option) *parityConn {
	t.Helper()
	if tr != tStdio {
		f := connect(t, tr, testserver.Options{}, opts...)
		return &parityConn{c: f.c, received: func(*testing.T) []testserver.Recorded {
			f.c.Close()
			return f.srv.Received()
		}}
	}
	record := filepath.Join(t.TempDir(), "received.json")
	cmd := transport.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{parityEnv + "=" + record}
	c, err := client.Connect(testCtx(t), cmd, opts...)
	if err != nil {
		t.Fatalf("connecting over stdio: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return &parityConn{c: c, received: func(t *testing.T) []testserver.Recorded {
		t.Helper()
		c.Close() // the child writes its record when its stdin ends, before it exits
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatalf("reading the stdio server's record: %v", err)
		}
		var got []testserver.Recorded
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("decoding the stdio server's record: %v", err)
		}
		return got
	}}
}

// clientAnswers returns the responses the server received (the client's
// answers to server requests), in order.
func clientAnswers(t *testing.T, rec []testserver.Recorded) []*jsonrpc.Response {
	t.Helper()
	var out []*jsonrpc.Response
	for _, r := range rec {
		if r.Method != "" || len(r.Raw) == 0 {
			continue
		}
		m, err := jsonrpc.DecodeMessage(r.Raw)
		if err != nil {
			t.Fatalf("decoding a recorded message %s: %v", r.Raw, err)
		}
		if resp, ok := m.(*jsonrpc.Response); ok {
			out = append(out, resp)
		}
	}
	return out
}

func countMethod(rec []testserver.Recorded, method string) int {
	n := 0
	for _, r := range rec {
		if r.Method == method {
			n++
		}
	}
	return n
}

// parityCase is one handler failure.
type parityCase struct {
	name    string
	handler any
	tool    string
	kind    client.Kind
	text    string // the error's text; a prefix when prefix is set
	prefix  bool
	code    int64  // what the legacy server must receive
	message string // its message; "" to compare with the handler's text
	cause   func(error) bool
}

func parityCases() []parityCase {
	denied := jsonrpc.NewError(1001, "the user declined sampling")
	const base = "client: tools/call: input request "
	return []parityCase{
		{name: "sampler error", tool: "sample", kind: client.KindHandler,
			handler: handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
				return nil, errors.New("no model")
			}),
			text: base + "sampling/createMessage failed: no model", code: jsonrpc.CodeInternalError, message: "no model",
			cause: func(err error) bool { return isAs[*engine.InputError](err) }},
		{name: "sampler json-rpc error", tool: "sample", kind: client.KindHandler,
			handler: handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
				return nil, denied
			}),
			text: base + "sampling/createMessage failed: " + denied.Error(), code: 1001, message: "the user declined sampling",
			cause: func(err error) bool {
				je, ok := errors.AsType[*jsonrpc.Error](err)
				return ok && je == denied && errors.Is(err, denied)
			}},
		{name: "elicitation answer off its schema", tool: "ask_user", kind: client.KindInvalid,
			handler: handler.ElicitorFunc(func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": 42}}, nil
			}),
			text: base + "elicitation/create failed: ", prefix: true, code: jsonrpc.CodeInternalError,
			cause: func(err error) bool { return isAs[*handler.ValidationError](err) && isAs[*engine.InputError](err) }},
	}
}

// TestHandlerFailureParity: for each handler failure, on stdio (a real
// subprocess), Streamable HTTP, WebSocket and an in-memory pipe, both eras give an *client.Error of the
// same Kind with the same text; the legacy server received the handler's
// code (the modern era sends nothing back: the request is abandoned, not
// retried), and the server's own *jsonrpc.Error is reachable in the
// legacy era.
func TestHandlerFailureParity(t *testing.T) {
	for _, tc := range parityCases() {
		for _, tr := range allTransports {
			t.Run(tc.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				texts := map[string]string{}
				for _, era := range allEras {
					texts[era.name] = checkParityEra(t, tc, tr, era.name, era.p)
				}
				if texts["modern"] != texts["legacy"] {
					t.Errorf("the eras disagree:\n modern: %s\n legacy: %s", texts["modern"], texts["legacy"])
				}
			})
		}
	}
}

// checkParityEra runs tc in one era and returns the error's text.
func checkParityEra(t *testing.T, tc parityCase, tr, eraName string, p client.Protocol) string {
	t.Helper()
	pc := parityConnect(t, tr, client.WithProtocol(p), client.WithHandler(tc.handler))
	_, err := pc.c.CallTool(testCtx(t), tc.tool, map[string]any{})
	ce, ok := errors.AsType[*client.Error](err)
	if !ok {
		t.Fatalf("%s: error %v (%T) is not a *client.Error", eraName, err, err)
	}
	if ce.Kind != tc.kind || ce.Op != "tools/call" {
		t.Errorf("%s: Op %q Kind %v, want tools/call %v; error: %v", eraName, ce.Op, ce.Kind, tc.kind, err)
	}
	text := err.Error()
	if tc.prefix && !strings.HasPrefix(text, tc.text) || !tc.prefix && text != tc.text {
		t.Errorf("%s: error text %q, want %q", eraName, text, tc.text)
	}
	if !tc.cause(err) {
		t.Errorf("%s: the cause check failed for %v", eraName, err)
	}
	ie, _ := errors.AsType[*engine.InputError](err)
	rec := pc.received(t)
	answers := clientAnswers(t, rec)
	if eraName == "modern" {
		if len(answers) != 0 || countMethod(rec, protocol.MethodToolsCall) != 1 {
			t.Errorf("modern: the server received %d answers and %d tools/call, want none and one (no retry)", len(answers), countMethod(rec, protocol.MethodToolsCall))
		}
		if ie != nil && ie.Server != nil {
			t.Errorf("modern: InputError.Server = %v, want nil", ie.Server)
		}
		return text
	}
	want := tc.message
	if want == "" && ie != nil {
		want = ie.Err.Error()
	}
	if len(answers) != 1 || answers[0].Error == nil || answers[0].Error.Code != tc.code || answers[0].Error.Message != want {
		t.Errorf("legacy: the server received %+v, want one error %d %q", answers, tc.code, want)
	}
	// The server's own answer to tools/call (the test server passes the
	// client's error on) is reachable, not in the text (checked above).
	if ie == nil || ie.Server == nil || ie.Server.Code != tc.code || ie.Server.Message != want {
		t.Errorf("legacy: the server's error is not reachable through the *engine.InputError: %+v", ie)
	}
	return text
}

// sampleBesideAnother calls the sample tool, whose sampling request the
// handler fails, in the legacy era over tr while another call is in
// flight, and returns its error.
func sampleBesideAnother(t *testing.T, tr string) error {
	t.Helper()
	failing := handler.SamplerFunc(func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return nil, errors.New("no model")
	})
	pc := parityConnect(t, tr, client.WithProtocol(client.Legacy), client.WithHandler(failing))
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	progressed := make(chan struct{})
	var once sync.Once
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		// In flight until cancelled: 100 steps of 100ms.
		_, _ = pc.c.CallTool(ctx, "slow", map[string]any{"steps": 100, "delayMs": 100},
			client.WithProgress(func(protocol.ProgressParams) { once.Do(func() { close(progressed) }) }))
	})
	select {
	case <-progressed:
	case <-ctx.Done():
		t.Fatal("the slow call made no progress")
	}
	_, err := pc.c.CallTool(testCtx(t), "sample", map[string]any{})
	return err
}

// TestHandlerFailureUntiedOnStdio: on stdio nothing on the wire ties a
// server request to a call, so a legacy server request that arrives while
// two calls are in flight is tied to neither (documented): the failing call
// gets the server's *jsonrpc.Error, kind server, as the server sent it.
func TestHandlerFailureUntiedOnStdio(t *testing.T) {
	t.Parallel()
	err := sampleBesideAnother(t, tStdio)
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Kind != client.KindServer {
		t.Fatalf("error = %v (%T), want a *client.Error of kind server", err, err)
	}
	if isAs[*engine.InputError](err) {
		t.Errorf("error %v is tied to the call with another call in flight", err)
	}
	je, ok := errors.AsType[*jsonrpc.Error](err)
	if !ok || je.Code != jsonrpc.CodeInternalError || je.Message != "no model" {
		t.Errorf("error = %v, want the server's -32603 \"no model\"", err)
	}
	if want := "client: tools/call: " + je.Error(); err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}

// TestHandlerFailureTiedByStreamOnHTTP: on Streamable HTTP the server's
// request comes on the response stream of the call that caused it, so it
// is tied to that call even with another call in flight.
func TestHandlerFailureTiedByStreamOnHTTP(t *testing.T) {
	t.Parallel()
	err := sampleBesideAnother(t, tHTTP)
	ce, ok := errors.AsType[*client.Error](err)
	if !ok || ce.Kind != client.KindHandler || !isAs[*engine.InputError](err) {
		t.Fatalf("error = %v (%T), want a *client.Error of kind handler", err, err)
	}
	if want := "client: tools/call: input request sampling/createMessage failed: no model"; err.Error() != want {
		t.Errorf("error text %q, want %q", err, want)
	}
}
