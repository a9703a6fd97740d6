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
	"github.com/conduitmcp/conduit/protocol"
)

// valueHandler has its methods on the pointer type: passed by value it
// implements nothing.
type valueHandler struct{}

func (*valueHandler) ListRoots(context.Context) ([]protocol.Root, error) { return nil, nil }

// misspelt names its method OnToolChanged instead of OnToolsChanged.
type misspelt struct{}

func (misspelt) OnToolChanged(context.Context) {}

// TestHandlerImplementsNothing: Connect and Dial refuse a handler that
// implements none of the interfaces, with a message naming them and the
// pointer-receiver pitfall.
func TestHandlerImplementsNothing(t *testing.T) {
	for _, tr := range []string{tPipe, tStdio, tHTTP} {
		for name, h := range map[string]any{"value of pointer methods": valueHandler{}, "misspelt": misspelt{}} {
			t.Run(tr+"/"+name, func(t *testing.T) {
				t.Parallel()
				f, err := tryConnect(t, tr, testserver.Options{}, client.WithHandler(h))
				if err == nil {
					t.Fatalf("connected with a handler that implements nothing: %+v", f.c.Negotiated().ClientCapabilities)
				}
				ce, ok := errors.AsType[*client.Error](err)
				if !ok || ce.Op != "connect" || ce.Kind != client.KindInvalid || !errors.Is(err, handler.ErrNoInterface) {
					t.Fatalf("error %v (%T): want an *Error connect/invalid matching handler.ErrNoInterface", err, err)
				}
				for _, w := range []string{"Sampler", "RootsLister", "ToolsChangedListener", "pointer"} {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not mention %q", err, w)
					}
				}
				if _, ok := h.(valueHandler); ok && !strings.Contains(err.Error(), "*client_test.valueHandler implements RootsLister") {
					t.Errorf("error %q does not point at the pointer type", err)
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
