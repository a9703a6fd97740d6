package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// callsOf returns the recorded tools/call requests.
func callsOf(srv *testserver.Server) []testserver.Recorded {
	var out []testserver.Recorded
	for _, r := range srv.Received() {
		if r.Method == protocol.MethodToolsCall {
			out = append(out, r)
		}
	}
	return out
}

// TestClientIdentityModern: WithClientIdentity replaces the _meta client
// capabilities and client info of that request only (each member on its
// own), on pipe, Streamable HTTP and WebSocket; every MRTR round carries
// it, and the server judges the request by it.
func TestClientIdentityModern(t *testing.T) {
	elicit := handler.Funcs{Elicit: func(context.Context, *protocol.ElicitParams) (*protocol.ElicitResult, error) {
		return nameAnswer("Ada"), nil
	}}
	caller := &protocol.Implementation{Name: "caller-a", Version: "7"}
	callerCaps := &protocol.ClientCapabilities{Elicitation: &protocol.ElicitationCapability{}, Extensions: map[string]json.RawMessage{"com.example/relay": json.RawMessage(`{}`)}}
	for _, tr := range []string{tPipe, tHTTP, tWS} {
		t.Run(tr, func(t *testing.T) {
			f := connect(t, tr, testserver.Options{}, client.WithProtocol(client.Modern), client.WithHandler(elicit))
			ctx := testCtx(t)
			if _, err := f.c.CallTool(ctx, "ask_user", nil, client.WithClientIdentity(callerCaps, caller)); err != nil {
				t.Fatalf("CallTool with an identity: %v", err)
			}
			calls := callsOf(f.srv)
			if len(calls) < 2 {
				t.Fatalf("%d tools/call requests, want the MRTR rounds", len(calls))
			}
			for i, r := range calls {
				if got := string(r.Meta(protocol.MetaClientInfo)); got != `{"name":"caller-a","version":"7"}` {
					t.Errorf("round %d clientInfo = %s, want caller-a", i+1, got)
				}
				if got := string(r.Meta(protocol.MetaClientCapabilities)); got != `{"elicitation":{},"extensions":{"com.example/relay":{}}}` {
					t.Errorf("round %d clientCapabilities = %s", i+1, got)
				}
			}
			// Info only: the capabilities stay the client's; the next
			// call without the option is the client's again.
			f.srv.Reset()
			if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "x"}, client.WithClientIdentity(nil, caller)); err != nil {
				t.Fatal(err)
			}
			if _, err := f.c.CallTool(ctx, "echo", map[string]any{"text": "y"}); err != nil {
				t.Fatal(err)
			}
			calls = callsOf(f.srv)
			own, _ := json.Marshal(f.c.Negotiated().ClientCapabilities)
			if got := string(calls[0].Meta(protocol.MetaClientCapabilities)); got != string(own) {
				t.Errorf("info-only call: capabilities %s, want the client's %s", got, own)
			}
			if got := string(calls[1].Meta(protocol.MetaClientInfo)); got == `{"name":"caller-a","version":"7"}` {
				t.Errorf("the call after carried the caller's info %s", got)
			}
			// Capabilities without elicitation: the server cannot ask,
			// and says so (it judged the request by the caller's
			// capabilities, not the client's).
			_, err := f.c.CallTool(ctx, "ask_user", nil, client.WithClientIdentity(&protocol.ClientCapabilities{}, nil))
			if !errors.Is(err, jsonrpc.ErrMissingRequiredClientCapability) {
				t.Errorf("ask_user for a caller without elicitation: %v, want -32021", err)
			}
		})
	}
}

// TestClientIdentityChecked: capabilities the handler cannot serve fail
// with KindInvalid before anything is sent (unless the input is taken
// by hand); in the legacy era the option fails with KindUnsupported, as
// the capabilities are the session's there.
func TestClientIdentityChecked(t *testing.T) {
	sampling := &protocol.ClientCapabilities{Sampling: &protocol.SamplingCapability{}}
	for _, tc := range []struct {
		name string
		p    client.Protocol
		opts []client.CallOption
		kind client.Kind
	}{
		{"modern/unservable", client.Modern, []client.CallOption{client.WithClientIdentity(sampling, nil)}, client.KindInvalid},
		{"modern/manual", client.Modern, []client.CallOption{client.WithClientIdentity(sampling, nil), client.WithManualInput(true)}, -1},
		{"legacy", client.Legacy, []client.CallOption{client.WithClientIdentity(nil, &protocol.Implementation{Name: "x", Version: "1"})}, client.KindUnsupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := connect(t, tPipe, testserver.Options{}, client.WithProtocol(tc.p))
			f.srv.Reset()
			err := f.c.Call(testCtx(t), protocol.MethodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x"}}, nil, tc.opts...)
			if tc.kind < 0 {
				if err != nil {
					t.Fatalf("Call = %v, want success", err)
				}
				return
			}
			var ce *client.Error
			if !errors.As(err, &ce) || ce.Kind != tc.kind || ce.Op != protocol.MethodToolsCall {
				t.Fatalf("Call = %v, want a %v *client.Error for tools/call", err, tc.kind)
			}
			if tc.kind == client.KindUnsupported && !errors.Is(err, client.ErrNotSupported) {
				t.Errorf("legacy error %v does not match ErrNotSupported", err)
			}
			if n := len(callsOf(f.srv)); n != 0 {
				t.Errorf("%d tools/call sent, want none", n)
			}
		})
	}
}
