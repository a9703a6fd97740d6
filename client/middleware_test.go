package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// sent and received name the direction a recorder.find looks for.
const sent, received = false, true

// seen is what a recording middleware saw of one message.
type seen struct {
	name                string // the middleware
	method              string
	incoming            bool
	note, neg           bool
	idBefore, idAfter   jsonrpc.ID
	inputKey            string
	version, kind, addr string
	result              string
	err                 error
}

// recorder is a middleware that records what passes, in order.
type recorder struct {
	trace  record[string] // "name>method" on entry, "name<method" on exit
	events record[seen]
}

func (r *recorder) mw(name string) client.Middleware {
	return func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			r.trace.add(name + ">" + req.Method)
			before := req.ID
			raw, err := next(ctx, req)
			r.trace.add(name + "<" + req.Method)
			r.events.add(seen{name: name, method: req.Method, incoming: req.Incoming, note: req.Notification,
				neg: req.Negotiation, idBefore: before, idAfter: req.ID, inputKey: req.InputKey, version: req.ProtocolVersion, kind: req.Transport,
				addr: req.ServerAddress, result: string(raw), err: err})
			return raw, err
		}
	}
}

// find returns the first event of middleware name for method and direction (incoming: sent by the server).
func (r *recorder) find(t *testing.T, name, method string, incoming bool) seen {
	t.Helper()
	var found seen
	if eventually(func() bool {
		events := r.events.all()
		i := slices.IndexFunc(events, func(e seen) bool { return e.name == name && e.method == method && e.incoming == incoming })
		if i >= 0 {
			found = events[i]
		}
		return i >= 0
	}) {
		return found
	}
	t.Fatalf("middleware %s never saw %s (incoming %v); trace %v", name, method, incoming, r.trace.all())
	return seen{}
}

// rewriter changes the echo tool's text and adds a _meta entry.
func rewriter(next client.Invoker) client.Invoker {
	return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
		if req.Method == protocol.MethodToolsCall && !req.Incoming {
			req.Params = json.RawMessage(strings.Replace(string(req.Params), `"text":"hi"`, `"text":"changed"`, 1))
			if err := req.SetMeta("com.example/mark", "from-middleware"); err != nil {
				return nil, err
			}
		}
		return next(ctx, req)
	}
}

var mwHandler = handler.Funcs{
	CreateMessage: func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return protocol.TextMessageResult("m", "Paris"), nil
	},
	ListRoots: func(context.Context) ([]protocol.Root, error) {
		return []protocol.Root{{URI: "file:///work", Name: "work"}}, nil
	},
	Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
	},
	OnLog: func(context.Context, *protocol.LoggingMessageParams) {},
}

// TestMiddlewareEverywhere runs two recording middlewares and a rewriting
// one in both eras on every transport: the composition order, params a
// middleware changed reaching the server, results and errors observed,
// the request id visible after next, negotiation, outgoing and incoming
// notifications, and the server's requests (sampling, roots: legacy
// server requests, modern MRTR input requests).
func TestMiddlewareEverywhere(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range allTransports {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				rec := &recorder{}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(mwHandler),
					client.WithMiddleware(rec.mw("outer"), rec.mw("inner")), client.WithMiddleware(rewriter))
				ctx := testCtx(t)
				checkMiddlewareCalls(ctx, t, f, rec, era.name, tr)
				checkMiddlewareIncoming(ctx, t, f, rec, era.name)
			})
		}
	}
}

func checkMiddlewareCalls(ctx context.Context, t *testing.T, f *fixture, rec *recorder, era, tr string) {
	t.Helper()
	if era == "modern" {
		if e := rec.find(t, "outer", protocol.MethodDiscover, sent); !e.neg || e.err != nil || !e.idAfter.IsValid() {
			t.Errorf("server/discover through the middleware: %+v, want a negotiation request with an id", e)
		}
	} else {
		if e := rec.find(t, "outer", protocol.MethodInitialize, sent); !e.neg || e.err != nil || !strings.Contains(e.result, "protocolVersion") {
			t.Errorf("initialize through the middleware: %+v", e)
		}
		if e := rec.find(t, "inner", protocol.NotificationInitialized, sent); !e.neg || !e.note {
			t.Errorf("notifications/initialized through the middleware: %+v", e)
		}
	}
	res, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	if err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if res.Text() != "changed" {
		t.Errorf("echo answered %q: the params the middleware changed did not reach the server", res.Text())
	}
	trace := rec.trace.all()
	i := slices.Index(trace, "outer>"+protocol.MethodToolsCall)
	order := trace[i:min(i+4, len(trace))]
	want := []string{"outer>tools/call", "inner>tools/call", "inner<tools/call", "outer<tools/call"}
	if !slices.Equal(order, want) {
		t.Errorf("composition %v, want %v (the first middleware outermost)", order, want)
	}
	e := rec.find(t, "outer", protocol.MethodToolsCall, sent)
	if e.idBefore.IsValid() || !e.idAfter.IsValid() {
		t.Errorf("tools/call id before next %v, after %v: want none, then the id the engine assigned", e.idBefore, e.idAfter)
	}
	if !strings.Contains(e.result, "changed") || e.version != f.c.Negotiated().Version || e.kind != f.c.Negotiated().Transport {
		t.Errorf("tools/call as the middleware saw it: %+v (version %s, transport %s)", e, f.c.Negotiated().Version, f.c.Negotiated().Transport)
	}
	if (tr == tHTTP || tr == tWS) != (e.addr != "") {
		t.Errorf("server address %q on %s", e.addr, tr)
	}
	if f.srv != nil {
		got := waitReceived(t, f.srv, protocol.MethodToolsCall)
		checkMeta(t, got.Params, "com.example/mark", `"from-middleware"`, era == "modern")
	}
	_, err = f.c.CallTool(ctx, "rpc_error", map[string]any{"code": -32050})
	if e := rec.find(t, "outer", protocol.MethodToolsCall, sent); e.err != nil {
		t.Fatalf("first tools/call observed error %v", e.err)
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32050 {
		t.Fatalf("CallTool(rpc_error) = %v, want the server's -32050", err)
	}
	events := rec.events.all()
	last := events[len(events)-1]
	if last.method != protocol.MethodToolsCall || !errors.As(last.err, &je) || je.Code != -32050 {
		t.Errorf("the outer middleware observed %+v, want the -32050 error", last)
	}
	if err := f.c.Notify(ctx, "notifications/vendor/hello", map[string]any{"n": 1}); err != nil {
		t.Fatalf("Notify: %v", err)
	}
	if e := rec.find(t, "inner", "notifications/vendor/hello", sent); !e.note || e.err != nil {
		t.Errorf("outgoing notification through the middleware: %+v", e)
	}
}

func checkMiddlewareIncoming(ctx context.Context, t *testing.T, f *fixture, rec *recorder, era string) {
	t.Helper()
	for _, tc := range []struct{ tool, method string }{
		{"sample", protocol.MethodSamplingCreateMessage},
		{"roots", protocol.MethodRootsList},
		{"ask_user", protocol.MethodElicitationCreate},
	} {
		if _, err := f.c.CallTool(ctx, tc.tool, map[string]any{}); err != nil {
			t.Fatalf("CallTool(%s): %v", tc.tool, err)
		}
		e := rec.find(t, "outer", tc.method, received)
		if e.err != nil || e.note || e.result == "" {
			t.Errorf("incoming %s through the middleware: %+v", tc.method, e)
		}
		// A legacy server request has the server's JSON-RPC id; an MRTR
		// input request has none, only its key in inputRequests.
		if era == "modern" && (e.idAfter.IsValid() || e.inputKey == "") {
			t.Errorf("MRTR input request id %v, key %q: want no id and its key", e.idAfter, e.inputKey)
		}
		if era != "modern" && (!e.idAfter.IsValid() || e.inputKey != "") {
			t.Errorf("legacy server request id %v, key %q: want the server's id and no key", e.idAfter, e.inputKey)
		}
	}
	if err := f.c.SetLogLevel(ctx, protocol.LevelDebug); err != nil {
		t.Fatalf("SetLogLevel: %v", err)
	}
	if _, err := f.c.CallTool(ctx, "log", map[string]any{"message": "m"}); err != nil {
		t.Fatalf("CallTool(log): %v", err)
	}
	if e := rec.find(t, "inner", protocol.NotificationMessage, received); !e.note || e.err != nil {
		t.Errorf("incoming notification through the middleware: %+v", e)
	}
}

// checkMeta asserts that params._meta[key] is want and, in the modern
// era, that the envelope is still there.
func checkMeta(t *testing.T, params json.RawMessage, key, want string, modern bool) {
	t.Helper()
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		t.Fatalf("params %s: %v", params, err)
	}
	if string(p.Meta[key]) != want {
		t.Errorf("the server received _meta %s = %s, want %s (params %s)", key, p.Meta[key], want, params)
	}
	if _, ok := p.Meta[protocol.MetaProtocolVersion]; ok != modern {
		t.Errorf("the server received _meta %s: protocol version present %v, want %v", params, ok, modern)
	}
}

// TestCallMetaAndHeaders sends per-call _meta entries on CallTool, Call
// and GetPrompt in both eras, and per-call HTTP headers on Streamable
// HTTP, and checks what the server received.
func TestCallMetaAndHeaders(t *testing.T) {
	netMatrix(t, func(t *testing.T, ctx context.Context, f *fixture, tr string, p client.Protocol) {
		modern := p == client.Modern
		meta := client.WithCallMeta(map[string]any{"com.example/tenant": "acme"})
		hdr := client.WithCallHeaders(map[string][]string{"X-Tenant": {"acme"}})
		if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}, meta, hdr); err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		got := waitReceived(t, f.srv, protocol.MethodToolsCall)
		checkMeta(t, got.Params, "com.example/tenant", `"acme"`, modern)
		if h := got.Headers.Get("X-Tenant"); (tr == tHTTP) != (h == "acme") {
			t.Errorf("X-Tenant header %q on %s", h, tr)
		}
		if err := f.c.Call(ctx, "vendor/x", map[string]any{"_meta": map[string]any{"own": 1}}, nil, meta); !errors.Is(err, jsonrpc.ErrMethodNotFound) {
			t.Fatalf("Call(vendor/x) = %v", err)
		}
		got = waitReceived(t, f.srv, "vendor/x")
		checkMeta(t, got.Params, "com.example/tenant", `"acme"`, modern)
		checkMeta(t, got.Params, "own", `1`, modern)
		if _, err := f.c.GetPrompt(ctx, "greet", map[string]string{"name": "a"}, meta); err != nil {
			t.Fatalf("GetPrompt: %v", err)
		}
		checkMeta(t, waitReceived(t, f.srv, protocol.MethodPromptsGet).Params, "com.example/tenant", `"acme"`, modern)
	})
}

// TestCallMetaRefusesReservedKeys: the protocol's own _meta keys and HTTP
// headers cannot be set per call, nor by a middleware.
func TestCallMetaRefusesReservedKeys(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	ctx := context.Background()
	var ce *client.Error
	for _, opt := range []client.CallOption{
		client.WithCallMeta(map[string]any{protocol.MetaProtocolVersion: "1999-01-01"}),
		client.WithCallMeta(map[string]any{protocol.MetaClientCapabilities: map[string]any{}}),
		client.WithCallHeaders(map[string][]string{"Mcp-Session-Id": {"x"}}),
	} {
		_, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}, opt)
		if !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
			t.Errorf("CallTool with a reserved key = %v, want an *Error of kind invalid", err)
		}
	}
	req := &client.Request{Params: json.RawMessage(`{}`)}
	if err := req.SetMeta(protocol.MetaClientInfo, "x"); err == nil {
		t.Error("SetMeta(clientInfo) succeeded, want a refusal")
	}
	if err := req.SetMeta("k", 1); err != nil {
		t.Fatal(err)
	}
	if v, ok := req.Meta("k"); !ok || string(v) != "1" {
		t.Errorf("Meta(k) = %s, %v after SetMeta", v, ok)
	}
	if err := req.SetMeta("k", nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := req.Meta("k"); ok {
		t.Error("SetMeta(k, nil) left the entry")
	}
}

// TestMiddlewareSeesAttempts: a middleware that sets OnAttempt hears of a
// retry (HTTP 503) and of an MRTR round, with the previous attempt's id.
func TestMiddlewareSeesAttempts(t *testing.T) {
	var got record[string]
	mw := func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			if req.Method == protocol.MethodToolsCall {
				req.OnAttempt = func(why string, prev jsonrpc.ID) {
					got.add(fmt.Sprintf("%s after %v", why, prev))
				}
			}
			raw, err := next(ctx, req)
			got.add(fmt.Sprintf("done %s %v%s", req.Method, req.ID, req.InputKey))
			return raw, err
		}
	}
	so := testserver.Options{Faults: []testserver.Fault{{Kind: testserver.FaultHTTPStatus, Status: 503, Method: protocol.MethodToolsCall, Times: 1}}}
	f := connect(t, tHTTP, so, client.WithProtocol(client.Modern), client.WithHandler(mwHandler), client.WithMiddleware(mw))
	ctx := testCtx(t)
	if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatalf("CallTool(echo): %v", err)
	}
	if _, err := f.c.CallTool(ctx, "sample", map[string]any{}); err != nil {
		t.Fatalf("CallTool(sample): %v", err)
	}
	want := []string{
		"done server/discover 1", "retry after 2", "done tools/call 3",
		"done sampling/createMessage <none>model", "input-round after 4", "done tools/call 5",
	}
	if got := got.all(); !slices.Equal(got, want) {
		t.Errorf("attempts %q, want %q", got, want)
	}
}

// TestMiddlewareSeesChangeNotifications: list_changed notifications pass
// through the middleware in both eras: legacy ones on the dispatcher,
// modern ones from the subscriptions/listen stream.
func TestMiddlewareSeesChangeNotifications(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				rec := &recorder{}
				changed := make(chan struct{}, 8)
				h := handler.Funcs{OnToolsChanged: func(context.Context) { changed <- struct{}{} }}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h), client.WithMiddleware(rec.mw("only")))
				if era.name == "modern" {
					eventually(func() bool { return f.srv.Listens() > 0 })
				}
				f.srv.NotifyToolsChanged()
				await(t, changed, "the listener never heard of the change")
				if e := rec.find(t, "only", protocol.NotificationToolsListChanged, received); !e.note || e.err != nil {
					t.Errorf("list_changed through the middleware: %+v", e)
				}
			})
		}
	}
}

// TestMiddlewareSeesReinitialization: an expired legacy HTTP session is
// initialized again and the call replayed; the middleware sees the new
// initialize (a negotiation request) inside the call, and the replay.
func TestMiddlewareSeesReinitialization(t *testing.T) {
	rec := &recorder{}
	var whys record[string]
	replays := func(next client.Invoker) client.Invoker {
		return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
			req.OnAttempt = func(why string, _ jsonrpc.ID) {
				whys.add(req.Method + " " + why)
			}
			return next(ctx, req)
		}
	}
	f := connect(t, tHTTP, testserver.Options{}, client.WithProtocol(client.Legacy), client.WithMiddleware(rec.mw("rec"), replays))
	ctx := testCtx(t)
	if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "a"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range f.srv.Sessions() {
		f.srv.ExpireSession(id)
	}
	if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "b"}); err != nil {
		t.Fatalf("CallTool after the session expired: %v", err)
	}
	inits := 0
	for _, e := range rec.events.all() {
		if e.method == protocol.MethodInitialize && e.neg && e.err == nil {
			inits++
		}
	}
	if whys := whys.all(); inits != 2 || !slices.Contains(whys, "tools/call replay") {
		t.Errorf("initialize seen %d times, attempts %q; want 2 and a tools/call replay", inits, whys)
	}
}

// count returns how many events of middleware name for method and
// direction were recorded.
func (r *recorder) count(name, method string, incoming bool) int {
	n := 0
	for _, e := range r.events.all() {
		if e.name == name && e.method == method && e.incoming == incoming {
			n++
		}
	}
	return n
}

// TestMiddlewareSeesEveryServerRequest: the legacy server requests that
// are not served by the handler directly pass through the middleware too,
// once each: the task receiver's (a task-augmented sampling request,
// answered with its task, and the tasks/* requests that follow), a request
// held for a manual caller (with the answer given to Resume), and the URL
// elicitations of a -32042 answer (presented as elicitation/create, as a
// modern MRTR round presents them). Pipe, stdio and HTTP.
func TestMiddlewareSeesEveryServerRequest(t *testing.T) {
	legacy := client.WithProtocol(client.Pin(protocol.Version20251125))
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		t.Run(tr+"/task-receiver", func(t *testing.T) {
			r := &recorder{}
			f := connect(t, tr, testserver.Options{}, legacy, client.WithHandler(mwHandler), client.WithMiddleware(r.mw("m")),
				client.WithCapabilityOptions(client.CapabilityOptions{TaskRequests: true}))
			res, err := f.c.CallTool(testCtx(t), "task_input", map[string]any{"kind": "sample"})
			if err != nil || !strings.Contains(res.Text(), "Paris") {
				t.Fatalf("CallTool = %v, %v", res, err)
			}
			e := r.find(t, "m", protocol.MethodSamplingCreateMessage, received)
			if !strings.Contains(e.result, `"taskId"`) {
				t.Errorf("sampling/createMessage result seen = %s, want the task", e.result)
			}
			res2 := r.find(t, "m", protocol.MethodTasksResult, received)
			if !strings.Contains(res2.result, "Paris") {
				t.Errorf("tasks/result seen = %s, want the handler's result", res2.result)
			}
			if n := r.count("m", protocol.MethodSamplingCreateMessage, received); n != 1 {
				t.Errorf("sampling/createMessage passed the middleware %d times, want once", n)
			}
		})
		t.Run(tr+"/held-for-manual-caller", func(t *testing.T) {
			r := &recorder{}
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Legacy), client.WithHandler(refusingElicitor(t)),
				client.WithMiddleware(r.mw("m")))
			ctx := testCtx(t)
			_, err := f.c.CallTool(ctx, "ask_rounds", map[string]any{"rounds": 1}, client.WithManualInput(true))
			ir, k := onlyKey(t, err)
			var res protocol.CallToolResult
			if err := f.c.Resume(ctx, ir, map[string]any{k: nameAnswer("Ada")}, &res); err != nil {
				t.Fatalf("Resume = %v", err)
			}
			e := r.find(t, "m", protocol.MethodElicitationCreate, received)
			if !strings.Contains(e.result, "Ada") || e.err != nil {
				t.Errorf("elicitation/create seen with result %s, err %v; want the answer given to Resume", e.result, e.err)
			}
		})
		t.Run(tr+"/url-elicitation", func(t *testing.T) {
			r := &recorder{}
			h := handler.Funcs{ElicitURL: func(_ context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
				return &protocol.ElicitResult{Action: protocol.ElicitAccept}, nil
			}}
			f := connect(t, tr, testserver.Options{}, legacy, client.WithHandler(h), client.WithMiddleware(r.mw("m")))
			if _, err := f.c.CallTool(testCtx(t), "url_required", nil); err != nil {
				t.Fatalf("CallTool = %v", err)
			}
			e := r.find(t, "m", protocol.MethodElicitationCreate, received)
			if !strings.Contains(e.result, `"accept"`) || e.idBefore.String() == "" {
				t.Errorf("elicitation/create seen = %+v, want the accepted URL elicitation keyed by its id", e)
			}
		})
	}
}

// TestMiddlewareProbeFallback: the server/discover probe of an Auto
// negotiation is marked Fallback, so that a middleware can tell its
// expected -32601 from a legacy server from a failure; a Modern client's
// probe, which cannot fall back, is not.
func TestMiddlewareProbeFallback(t *testing.T) {
	for _, tc := range []struct {
		name     string
		p        client.Protocol
		era      testserver.Era
		fallback bool
	}{
		{"auto-legacy", client.Auto, testserver.LegacyOnly, true},
		{"auto-modern", client.Auto, testserver.ModernOnly, true},
		{"modern", client.Modern, testserver.ModernOnly, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recorder{}
			var fallback []bool
			mark := func(next client.Invoker) client.Invoker {
				return func(ctx context.Context, req *client.Request) (json.RawMessage, error) {
					if req.Method == protocol.MethodDiscover {
						fallback = append(fallback, req.Fallback)
					} else if req.Fallback {
						t.Errorf("%s marked Fallback", req.Method)
					}
					return next(ctx, req)
				}
			}
			connect(t, tPipe, testserver.Options{Era: tc.era}, client.WithProtocol(tc.p), client.WithMiddleware(rec.mw("outer"), mark))
			e := rec.find(t, "outer", protocol.MethodDiscover, sent)
			if len(fallback) == 0 || fallback[0] != tc.fallback {
				t.Errorf("server/discover Fallback %v, want %v", fallback, tc.fallback)
			}
			if tc.era == testserver.LegacyOnly && !errors.Is(e.err, jsonrpc.ErrMethodNotFound) {
				t.Errorf("the probe of a legacy server returned %v through the middleware, want -32601", e.err)
			}
		})
	}
}
