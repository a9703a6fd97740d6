package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
)

// TestCallAndNotify sends untyped requests and a vendor notification in
// both eras over pipe, HTTP and WebSocket, and checks what the server
// received: the modern envelope on a generic request, the params as given.
func TestCallAndNotify(t *testing.T) {
	netMatrix(t, func(t *testing.T, ctx context.Context, f *fixture, _ string, _ client.Protocol) {
		var list protocol.ListToolsResult
		if err := f.c.Call(ctx, protocol.MethodToolsList, nil, &list); err != nil {
			t.Fatalf("Call(tools/list): %v", err)
		}
		if len(list.Tools) == 0 {
			t.Fatal("Call(tools/list) decoded no tools")
		}
		var raw json.RawMessage
		if err := f.c.Call(ctx, protocol.MethodToolsCall, json.RawMessage(`{"name":"echo","arguments":{"text":"hi"}}`), &raw); err != nil {
			t.Fatalf("Call(tools/call): %v", err)
		}
		var res protocol.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil || res.Text() != "hi" {
			t.Fatalf("tools/call result %s (%v), want the echo of hi", raw, err)
		}

		err := f.c.Call(ctx, "vendor/unknown", map[string]any{"x": 1}, nil)
		if !errors.Is(err, jsonrpc.ErrMethodNotFound) {
			t.Fatalf("Call(vendor/unknown) = %v, want the server's method-not-found", err)
		}
		if err := f.c.Notify(ctx, "notifications/vendor/ping", map[string]any{"n": 7}); err != nil {
			t.Fatalf("Notify: %v", err)
		}
		got := waitReceived(t, f.srv, "notifications/vendor/ping")
		if string(got.Params) != `{"n":7}` {
			t.Errorf("notification params %s, want {\"n\":7}", got.Params)
		}
		call := waitReceived(t, f.srv, "vendor/unknown")
		var p struct {
			X    int            `json:"x"`
			Meta map[string]any `json:"_meta"`
		}
		if err := json.Unmarshal(call.Params, &p); err != nil || p.X != 1 {
			t.Fatalf("vendor/unknown params %s (%v)", call.Params, err)
		}
		_, hasVersion := p.Meta[protocol.MetaProtocolVersion]
		if modern := f.c.Negotiated().Version == "2026-07-28"; hasVersion != modern {
			t.Errorf("vendor/unknown _meta %v: protocol version present %v, want %v", p.Meta, hasVersion, modern)
		}
	})
}

func TestCallRefusesEmptyMethod(t *testing.T) {
	f := connect(t, tPipe, testserver.Options{})
	ctx := context.Background()
	var ce *client.Error
	if err := f.c.Call(ctx, "", nil, nil); !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
		t.Errorf("Call(\"\") = %v, want an *Error of kind invalid", err)
	}
	if err := f.c.Notify(ctx, "", nil); !errors.As(err, &ce) || ce.Kind != client.KindInvalid {
		t.Errorf("Notify(\"\") = %v, want an *Error of kind invalid", err)
	}
}

// waitReceived waits (bounded) until srv has received a message for method.
func waitReceived(t *testing.T, srv *testserver.Server, method string) testserver.Recorded {
	t.Helper()
	var got testserver.Recorded
	if !eventually(func() bool {
		for _, r := range srv.Received() {
			if r.Method == method {
				got = r
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the server never received %s", method)
	}
	return got
}
