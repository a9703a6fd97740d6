package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// testHandler implements sampling, form elicitation and roots.
type testHandler struct {
	content map[string]any // the form answer
}

func (h *testHandler) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	return &protocol.CreateMessageResult{Role: protocol.RoleAssistant, Content: json.RawMessage(`{"type":"text","text":"Paris"}`), Model: "test-model"}, nil
}

func (h *testHandler) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: h.content}, nil
}

func (h *testHandler) ListRoots(ctx context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///work", Name: "work"}}, nil
}

func TestHandler(t *testing.T) {
	matrix(t, func(t *testing.T, tr string, p client.Protocol) {
		h := &testHandler{content: map[string]any{"name": "Ada"}}
		f := connect(t, tr, testserver.Options{}, client.WithProtocol(p), client.WithHandler(h))
		ctx := testCtx(t)
		caps := f.c.Negotiated().ClientCapabilities
		if caps.Sampling == nil || caps.Elicitation == nil || caps.Roots == nil {
			t.Errorf("ClientCapabilities() = %+v, want sampling, elicitation and roots", caps)
		}
		tests := []struct{ tool, want string }{
			{"sample", "test-model said: Paris"},
			{"ask_user", "Hello, Ada!"},
			{"roots", "file:///work"},
		}
		for _, tt := range tests {
			res, err := f.c.CallTool(ctx, tt.tool, map[string]any{})
			if err != nil {
				t.Fatalf("CallTool(%s) = %v", tt.tool, err)
			}
			if got := res.Text(); got != tt.want {
				t.Errorf("CallTool(%s) text = %q, want %q", tt.tool, got, tt.want)
			}
		}
	})
}

func TestHandlerNone(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Modern))
	if diff := cmp.Diff(protocol.ClientCapabilities{}, f.c.Negotiated().ClientCapabilities); diff != "" {
		t.Errorf("ClientCapabilities without a handler (-want +got):\n%s", diff)
	}
}

// TestElicitationValidated: an answer that breaks the requested schema
// never reaches the server; the call fails with a *ValidationError (in
// the modern era through MRTR, in the legacy era the server sees an
// error response and the tool call fails).
func TestElicitationValidated(t *testing.T) {
	for _, era := range allEras {
		t.Run(era.name, func(t *testing.T) {
			h := &testHandler{content: map[string]any{"name": 42}}
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
			res, err := f.c.CallTool(testCtx(t), "ask_user", map[string]any{})
			var ve *handler.ValidationError
			switch {
			case errors.As(err, &ve):
				if !strings.Contains(ve.Error(), "name") {
					t.Errorf("ValidationError = %v, want it to name the field", ve)
				}
			case era.p == client.Legacy && errors.As(err, new(*jsonrpc.Error)):
				// Legacy: the client answered elicitation/create with an
				// error, which the server passed on.
			default:
				t.Errorf("CallTool(ask_user) with an invalid answer = %+v, %v; want a validation failure", res, err)
			}
			for _, r := range f.srv.Received() {
				if strings.Contains(string(r.Raw), `"name":42`) {
					t.Errorf("the invalid answer reached the server: %s", r.Raw)
				}
			}
		})
	}
}

// TestHandlerListeners: the handler's change listeners hear list changes
// in both eras (modern through an automatic listen stream).
func TestHandlerListeners(t *testing.T) {
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} {
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				changed := make(chan string, 8)
				h := struct {
					handler.ToolsChangedListenerFunc
					handler.PromptsChangedListenerFunc
				}{
					func(context.Context) { changed <- "tools" },
					func(context.Context) { changed <- "prompts" },
				}
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(h))
				ctx := testCtx(t)
				for _, want := range []string{"tools", "prompts"} {
					if want == "tools" {
						f.srv.NotifyToolsChanged()
					} else {
						f.srv.NotifyPromptsChanged()
					}
					select {
					case got := <-changed:
						if got != want {
							t.Errorf("listener = %q, want %q", got, want)
						}
					case <-ctx.Done():
						t.Fatalf("listener for %s not called", want)
					}
				}
			})
		}
	}
}

func TestNotifyRootsChanged(t *testing.T) {
	tests := []struct {
		pipeCase
		sent bool
	}{
		{pipeCase{"legacy advertised", client.Legacy, []client.Option{client.WithHandler(&testHandler{}), client.WithCapabilityOptions(client.CapabilityOptions{RootsListChanged: true})}}, true},
		{pipeCase{"legacy not advertised", client.Legacy, []client.Option{client.WithHandler(&testHandler{})}}, false},
		{pipeCase{"modern", client.Modern, []client.Option{client.WithHandler(&testHandler{}), client.WithCapabilityOptions(client.CapabilityOptions{RootsListChanged: true})}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.connect(t)
			ctx := testCtx(t)
			if err := f.c.NotifyRootsChanged(ctx); err != nil {
				t.Fatalf("NotifyRootsChanged = %v", err)
			}
			// A request after the notification orders it on the stream.
			if err := f.c.Ping(ctx); err != nil {
				t.Fatal(err)
			}
			if got := count(f.srv, protocol.NotificationRootsListChanged) > 0; got != tt.sent {
				t.Errorf("notification sent = %v, want %v", got, tt.sent)
			}
		})
	}
}

// valueHandler has its methods on the pointer type: passed by value it
// implements nothing.
type valueHandler struct{}

func (*valueHandler) ListRoots(context.Context) ([]protocol.Root, error) { return nil, nil }

// misspelt names its method OnToolChanged instead of OnToolsChanged.
type misspelt struct{}

func (misspelt) OnToolChanged(context.Context) {}

// misspeltBeside has a right ListRoots beside the misspelt OnToolChanged.
type misspeltBeside struct{ misspelt }

func (misspeltBeside) ListRoots(context.Context) ([]protocol.Root, error) { return nil, nil }

// TestHandlerImplementsNothing: Connect and Dial refuse a handler that
// implements none of the interfaces, or has a misspelt method beside a
// right one, with a message naming the method it looks meant for and the
// pointer-receiver pitfall.
func TestHandlerImplementsNothing(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		for name, h := range map[string]any{"value of pointer methods": valueHandler{}, "misspelt": misspelt{}, "misspelt beside": misspeltBeside{}} {
			t.Run(tr+"/"+name, func(t *testing.T) {
				t.Parallel()
				f, err := tryConnect(t, tr, testserver.Options{}, client.WithHandler(h))
				if err == nil {
					t.Fatalf("connected with a handler that implements nothing: %+v", f.c.Negotiated().ClientCapabilities)
				}
				ce, _ := errors.AsType[*client.Error](err)
				if _, ok := errors.AsType[*handler.CheckError](err); !ok || ce == nil || ce.Op != "connect" || ce.Kind != client.KindInvalid {
					t.Fatalf("error %v (%T): want an *Error connect/invalid wrapping a *handler.CheckError", err, err)
				}
				want := "OnToolChanged looks like a misspelling of OnToolsChanged (ToolsChangedListener)"
				if _, ok := h.(valueHandler); ok {
					want = "*client_test.valueHandler implements RootsLister (its ListRoots has a pointer receiver): pass a pointer"
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
				if _, beside := h.(misspeltBeside); errors.Is(err, handler.ErrNoInterface) == beside || !errors.Is(err, handler.ErrMethodMismatch) {
					t.Errorf("error %v: matches ErrNoInterface %v, ErrMethodMismatch %v", err, errors.Is(err, handler.ErrNoInterface), errors.Is(err, handler.ErrMethodMismatch))
				}
			})
		}
	}
}

// wireCapabilities returns the client capabilities srv received: from
// initialize (legacy) or from the _meta of the last tools/call (modern).
func wireCapabilities(t *testing.T, srv *testserver.Server) map[string]json.RawMessage {
	t.Helper()
	var caps map[string]json.RawMessage
	for _, r := range srv.Received() {
		var p struct {
			Capabilities map[string]json.RawMessage `json:"capabilities"`
			Meta         map[string]json.RawMessage `json:"_meta"`
		}
		if r.Method == "" || json.Unmarshal(r.Params, &p) != nil {
			continue
		}
		switch {
		case r.Method == protocol.MethodInitialize:
			caps = p.Capabilities
		case r.Method == protocol.MethodToolsCall && p.Meta[protocol.MetaClientCapabilities] != nil:
			caps = nil
			if err := json.Unmarshal(p.Meta[protocol.MetaClientCapabilities], &caps); err != nil {
				t.Fatalf("decoding the capabilities in _meta: %v", err)
			}
		}
	}
	if caps == nil {
		t.Fatal("no client capabilities on the wire")
	}
	return caps
}

// TestFuncsCapabilities: a handler.Funcs advertises exactly the
// capabilities of its set fields, on the wire, in both eras, and serves
// the requests with the protocol's result builders.
func TestFuncsCapabilities(t *testing.T) {
	sample := func(context.Context, *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
		return protocol.TextMessageResult("funcs-model", "Paris"), nil
	}
	elicit := func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return protocol.AcceptElicitation(map[string]any{"name": "Ada"}), nil
	}
	roots := func(context.Context) ([]protocol.Root, error) { return []protocol.Root{{URI: "file:///funcs"}}, nil }
	tests := []struct {
		name string
		h    handler.Funcs
		want []string // capability names on the wire
		tool string   // a tool the handler serves, and its text
		text string
	}{
		{"sampling only", handler.Funcs{CreateMessage: sample}, []string{"sampling"}, "sample", "funcs-model said: Paris"},
		{"elicitation and roots", handler.Funcs{Elicit: elicit, ListRoots: roots}, []string{"elicitation", "roots"}, "ask_user", "Hello, Ada!"},
		{"listener only", handler.Funcs{OnToolsChanged: func(context.Context) {}}, nil, "echo", "hi"},
	}
	for _, era := range allEras {
		for _, tt := range tests {
			t.Run(era.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(era.p), client.WithHandler(&tt.h))
				args := map[string]any{}
				if tt.tool == "echo" {
					args["text"] = "hi"
				}
				res, err := f.c.CallTool(testCtx(t), tt.tool, args)
				if err != nil || res.Text() != tt.text {
					t.Fatalf("CallTool(%s) = %+v, %v; want %q", tt.tool, res, err, tt.text)
				}
				var got []string
				for k := range wireCapabilities(t, f.srv) {
					got = append(got, k)
				}
				slices.Sort(got)
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("capabilities on the wire (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestDeclaredExtensions: client extensions given in CapabilityOptions are
// advertised in both eras (initialize, and every modern request's
// clientCapabilities), and a malformed identifier or settings value is
// refused at connect.
func TestDeclaredExtensions(t *testing.T) {
	exts := map[string]json.RawMessage{"com.example/feature": json.RawMessage(`{"v":1}`), "com.example/bare": nil}
	for _, era := range allEras {
		for _, tr := range []string{tPipe, tHTTP} { // the servers whose record is in this process
			t.Run(era.name+"/"+tr, func(t *testing.T) {
				t.Parallel()
				f := connect(t, tr, testserver.Options{}, client.WithProtocol(era.p),
					client.WithCapabilityOptions(client.CapabilityOptions{Extensions: exts, TasksExtension: true}))
				if _, err := f.c.CallTool(testCtx(t), "echo", map[string]any{"text": "hi"}); err != nil {
					t.Fatal(err)
				}
				var got map[string]json.RawMessage
				if err := json.Unmarshal(wireCapabilities(t, f.srv)["extensions"], &got); err != nil {
					t.Fatalf("extensions on the wire: %v", err)
				}
				want := map[string]string{"com.example/feature": `{"v":1}`, "com.example/bare": `{}`, protocol.ExtensionTasks: `{}`}
				gotText := map[string]string{}
				for k, v := range got {
					gotText[k] = string(v)
				}
				if diff := cmp.Diff(want, gotText); diff != "" {
					t.Errorf("declared extensions (-want +got):\n%s", diff)
				}
			})
		}
	}
	for name, bad := range map[string]map[string]json.RawMessage{
		"no prefix":     {"feature": nil},
		"bad label":     {"com..example/f": nil},
		"not an object": {"com.example/f": json.RawMessage(`[1]`)},
	} {
		t.Run("refused/"+name, func(t *testing.T) {
			_, err := tryConnect(t, tPipe, testserver.Options{}, client.WithCapabilityOptions(client.CapabilityOptions{Extensions: bad}))
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Kind != client.KindInvalid || !strings.Contains(err.Error(), "CapabilityOptions.Extensions") {
				t.Errorf("Connect = %v, want an *Error of kind invalid naming CapabilityOptions.Extensions", err)
			}
		})
	}
}
