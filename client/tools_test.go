package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// TestParamHeaders: on modern Streamable HTTP, x-mcp-header arguments
// travel as Mcp-Param-* headers.
func TestParamHeaders(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	ctx := testCtx(t)
	for _, err := range f.c.Tools(ctx) {
		if err != nil {
			t.Fatal(err)
		}
	}
	args := map[string]any{"region": "eu-west", "priority": 3, "verbose": true, "note": "not a header"}
	if _, err := f.c.CallTool(ctx, "headers", args); err != nil {
		t.Fatalf("CallTool(headers) = %v", err)
	}
	var got map[string]string
	for _, r := range f.srv.Received() {
		if r.Method == protocol.MethodToolsCall {
			got = map[string]string{
				"Region":   r.Headers.Get("Mcp-Param-Region"),
				"Priority": r.Headers.Get("Mcp-Param-Priority"),
				"Verbose":  r.Headers.Get("Mcp-Param-Verbose"),
				"Note":     r.Headers.Get("Mcp-Param-Note"),
				"Name":     r.Headers.Get(protocol.HeaderName),
			}
		}
	}
	want := map[string]string{"Region": "eu-west", "Priority": "3", "Verbose": "true", "Note": "", "Name": "headers"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("header %s = %q, want %q", k, got[k], v)
		}
	}
}

// TestHeaderMismatchRetry: a -32020 answer makes the client refresh the
// tools list and retry once; the registry then supplies the headers.
func TestHeaderMismatchRetry(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultHeaderMismatch, Method: protocol.MethodToolsCall, Times: 1})
	if _, err := f.c.CallTool(testCtx(t), "headers", map[string]any{"region": "eu"}); err != nil {
		t.Fatalf("CallTool after a header mismatch = %v", err)
	}
	if n := count(f.srv, protocol.MethodToolsCall); n != 2 {
		t.Errorf("tools/call sent %d times, want 2", n)
	}
	if n := count(f.srv, protocol.MethodToolsList); n != 1 {
		t.Errorf("tools/list sent %d times, want 1", n)
	}
	last := f.srv.Received()
	for i := len(last) - 1; i >= 0; i-- {
		if last[i].Method == protocol.MethodToolsCall {
			if v := last[i].Headers.Get("Mcp-Param-Region"); v != "eu" {
				t.Errorf("retried call Mcp-Param-Region = %q, want eu", v)
			}
			break
		}
	}
}

func TestPaginationLoop(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p))
			f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultRepeatCursor, Method: protocol.MethodToolsList})
			var n int
			var err error
			for _, e := range f.c.Tools(testCtx(t)) {
				if e != nil {
					err = e
					break
				}
				n++
			}
			pe, ok := errors.AsType[*client.Error](err)
			if !ok || pe.Kind != client.KindProtocol || !strings.Contains(err.Error(), "repeated the pagination cursor") {
				t.Fatalf("Tools over a looping cursor: err = %v, want an *Error of kind protocol naming the repeated cursor", err)
			}
			if pe.Op != protocol.MethodToolsList {
				t.Errorf("Error.Op = %q", pe.Op)
			}
		})
	}
}

func TestMaxPages(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{PageSize: 1}, client.WithProtocol(client.Modern), client.WithMaxPages(3))
	var err error
	for _, e := range f.c.Prompts(testCtx(t)) {
		err = e
	}
	if err != nil {
		t.Fatalf("2 prompts in 2 pages with a cap of 3: %v", err)
	}
	for _, e := range f.c.Tools(testCtx(t)) {
		err = e
	}
	if ce, ok := errors.AsType[*client.Error](err); !ok || ce.Kind != client.KindProtocol || ce.Op != protocol.MethodToolsList ||
		!strings.Contains(err.Error(), "more than 3 pages") {
		t.Errorf("tools over more than 3 pages: err = %v, want a protocol-kind *Error naming the cap", err)
	}
}

func TestStrictCapabilities(t *testing.T) {
	// A modern server whose discover result advertises tools only.
	discover := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"ttlMs":0,"cacheScope":"public"}`
	so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultResult, Method: protocol.MethodDiscover, Result: []byte(discover)}}}
	ctx := testCtx(t)

	f := connect(t, tPipe, so, client.WithProtocol(client.Modern), client.WithCapabilityOptions(client.CapabilityOptions{Strict: true}))
	if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "hi"}); err != nil {
		t.Errorf("CallTool with tools advertised = %v", err)
	}
	checks := map[string]error{}
	_, checks["prompts/get"] = f.c.GetPrompt(ctx, "simple", nil)
	_, checks["resources/read"] = f.c.ReadResource(ctx, "file:///hello.txt")
	_, checks["completion/complete"] = f.c.Complete(ctx, protocol.PromptReference("greet"), protocol.CompleteArgument{Name: "name"}, nil)
	checks["logging/setLevel"] = f.c.SetLogLevel(ctx, protocol.LevelInfo)
	_, checks["subscribe"] = f.c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true})
	for _, e := range f.c.Prompts(ctx) {
		checks["prompts/list"] = e
	}
	for m, err := range checks {
		ce, ok := errors.AsType[*client.Error](err)
		if !ok || ce.Kind != client.KindUnsupported || ce.Op != m || !errors.Is(err, client.ErrNotSupported) {
			t.Errorf("%s without the capability: err = %v, want an *Error of kind unsupported for the method", m, err)
		}
	}

	// Without strictness the server decides.
	loose := connect(t, tPipe, so, client.WithProtocol(client.Modern))
	if _, err := loose.c.GetPrompt(ctx, "simple", nil); err != nil {
		t.Errorf("GetPrompt without strictness = %v", err)
	}
}

func TestDialErrors(t *testing.T) {
	ctx := testCtx(t)
	if _, err := client.Dial(ctx, "ftp://example.com/mcp"); err == nil {
		t.Error("Dial(ftp://) succeeded")
	}
	if _, err := client.Dial(ctx, "http://127.0.0.1:1/mcp", client.WithProtocol(client.Pin("1999-01-01"))); !errors.Is(err, client.ErrNoCommonVersion) {
		t.Errorf("Dial with an unknown pin: err = %v, want ErrNoCommonVersion", err)
	}
}

func TestPinnedVersions(t *testing.T) {
	for _, v := range []string{protocol.Version20260728, protocol.Version20251125, protocol.Version20250618} {
		t.Run(v, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Pin(v)))
			if got := f.c.Negotiated().Version; got != v {
				t.Errorf("ProtocolVersion() = %q, want %q", got, v)
			}
			if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
				t.Errorf("CallTool = %v", err)
			}
		})
	}
}

// recordingHandler is a slog.Handler that keeps the messages it gets.
type recordingHandler struct {
	msgs record[string]
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	var tool string
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "tool" {
			tool = a.Value.String()
		}
		return true
	})
	h.msgs.add(r.Message + " " + tool)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestDroppedToolsLogged(t *testing.T) {
	rec := &recordingHandler{}
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern), client.WithLogger(slog.New(rec)))
	if d := f.c.DroppedTools(); d != nil {
		t.Errorf("DroppedTools before any listing = %v", d)
	}
	for tool, err := range f.c.Tools(testCtx(t)) {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(tool.Name, "bad_header") {
			t.Errorf("tool %s listed", tool.Name)
		}
	}
	dropped := f.c.DroppedTools()
	if len(dropped) != 2 || dropped["bad_header_type"] == nil || dropped["bad_header_name"] == nil {
		t.Errorf("DroppedTools = %v, want bad_header_type and bad_header_name with reasons", dropped)
	}
	// The same server on stdio-like transports and in the legacy era
	// drops nothing.
	for _, p := range []client.Protocol{client.Modern, client.Legacy} {
		g := connect(t, tPipe, testserver.Options{}, client.WithProtocol(p))
		for _, err := range g.c.Tools(testCtx(t)) {
			if err != nil {
				t.Fatal(err)
			}
		}
		if d := g.c.DroppedTools(); d != nil {
			t.Errorf("%v over a pipe: DroppedTools = %v", p, d)
		}
	}
	msgs := rec.msgs.all()
	for _, tool := range []string{"bad_header_type", "bad_header_name"} {
		found := false
		for _, m := range msgs {
			if strings.Contains(m, "x-mcp-header") && strings.HasSuffix(m, " "+tool) {
				found = true
			}
		}
		if !found {
			t.Errorf("no log line for dropped tool %s in %q", tool, msgs)
		}
	}
}

func TestClientInfo(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			info := protocol.Implementation{Name: "my-agent", Version: "1.2.3"}
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithClientInfo(info))
			if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range f.srv.Received() {
				if strings.Contains(string(r.Params), `"name":"my-agent"`) {
					found = true
				}
			}
			if !found {
				t.Errorf("client info %+v never reached the server", info)
			}
		})
	}
}

// TestCallToolArgumentForms: CallTool takes a map, a struct, raw JSON or
// the JSON string an LLM's function call carries, in both eras; a
// non-object is refused before anything is sent.
func TestCallToolArgumentForms(t *testing.T) {
	type echoArgs struct {
		Text string `json:"text"`
	}
	forms := map[string]any{
		"map":    map[string]any{"text": "hi"},
		"struct": echoArgs{Text: "hi"},
		"raw":    json.RawMessage(`{"text":"hi"}`),
		"string": ` {"text": "hi"} `,
	}
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p))
				ctx := testCtx(t)
				for name, args := range forms {
					res, err := f.c.CallTool(ctx, "echo", args)
					if err != nil || res.Text() != "hi" {
						t.Errorf("%s arguments: CallTool = %+v, %v", name, res, err)
					}
				}
				f.srv.Reset()
				_, err := f.c.CallTool(ctx, "echo", `["hi"]`)
				ce, ok := errors.AsType[*client.Error](err)
				if !ok || ce.Kind != client.KindInvalid || !strings.Contains(err.Error(), "not a JSON object but an array") {
					t.Errorf("array arguments: err = %v, want an invalid-kind *Error saying it is an array", err)
				}
				if n := count(f.srv, protocol.MethodToolsCall); n != 0 {
					t.Errorf("tools/call sent %d times for invalid arguments", n)
				}
			})
		}
	}
}

// TestCallToolNilArguments: a nil json.RawMessage, nil []byte, nil map
// or empty RawMessage means "no arguments".
func TestCallToolNilArguments(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	for _, tc := range []struct {
		name string
		args any
	}{
		{"nil RawMessage", json.RawMessage(nil)},
		{"empty RawMessage", json.RawMessage{}},
		{"nil bytes", []byte(nil)},
		{"nil map", map[string]any(nil)},
		{"nil", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := f.c.CallTool(testCtx(t), "structured", tc.args)
			if err != nil || res.Failed() {
				t.Fatalf("CallTool(structured, %#v) = %+v, %v", tc.args, res, err)
			}
		})
	}
	if _, err := f.c.CallTool(testCtx(t), "structured", json.RawMessage(`[1]`)); !errors.As(err, new(*handler.ValidationError)) {
		t.Errorf("CallTool with an array = %v, want a *ValidationError", err)
	}
}

// TestToolListingDuringCalls lists tools while calls of the same tools
// run (modern Streamable HTTP, where a call reads the tool's x-mcp-header
// annotations): a listing refreshes what the client knows of a tool
// without touching what a call in flight already read (the race detector
// checks).
func TestToolListingDuringCalls(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	ctx := testCtx(t)
	listAll := func() {
		for _, err := range f.c.Tools(ctx) {
			if err != nil {
				t.Error(err)
				return
			}
		}
	}
	listAll()
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			listAll()
		}
	})
	for range 20 {
		if _, _, err := client.CallToolAs[map[string]any](ctx, f.c, "structured", map[string]any{"city": "Paris"}); err != nil {
			t.Fatal(err)
		}
		if _, err := f.c.CallTool(ctx, "headers", map[string]any{"region": "eu"}); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
}

// TestDroppedToolsForgotten: a server whose listings keep naming new
// tools with invalid x-mcp-header annotations does not make
// DroppedTools grow with every listing: a complete walk forgets the
// drops of the tools it no longer lists, as it forgets such tools.
func TestDroppedToolsForgotten(t *testing.T) {
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Modern))
	for k := range 50 {
		f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
			Result: json.RawMessage(`{"tools":[{"name":"bad` + strconv.Itoa(k) + `","inputSchema":{"type":"object","properties":{"amount":{"type":"number","x-mcp-header":"Amount"}}}}]}`)})
		drainTools(t, f.c)
	}
	if d := f.c.DroppedTools(); len(d) != 1 || d["bad49"] == nil {
		t.Errorf("DroppedTools after 50 listings of a renamed tool = %d entries, want only bad49", len(d))
	}
	f.srv.SetFaults(testserver.Fault{Kind: testserver.FaultResult, Method: "tools/list",
		Result: json.RawMessage(`{"tools":[{"name":"good","inputSchema":{"type":"object"}}]}`)})
	drainTools(t, f.c)
	if d := f.c.DroppedTools(); d != nil {
		t.Errorf("DroppedTools after a listing that drops nothing = %d entries, want nil", len(d))
	}
}
