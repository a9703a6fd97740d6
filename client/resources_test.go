package client_test

import (
	"errors"
	"testing"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/protocol"
)

// TestNegotiatedDiscover: Negotiated().Discover is the discover result
// the client knows (nil in the legacy era); a server/discover sent with
// Call goes to the server every time, even while the known one is fresh,
// and what the client knows of the server follows it (as after Ping); a
// result that is not a DiscoverResult is a protocol-kind error and
// changes nothing.
func TestNegotiatedDiscover(t *testing.T) {
	changed := `{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"instructions":"changed","ttlMs":60000,"cacheScope":"public"}`
	so := testserver.Options{TTL: time.Minute, Faults: []testserver.Fault{
		{Kind: testserver.FaultResult, Method: protocol.MethodDiscover, Skip: 1, Times: 1, Result: []byte(changed)},
		{Kind: testserver.FaultResult, Method: protocol.MethodDiscover, Skip: 3, Times: 1, Result: []byte(`{"tools":[]}`)},
	}}
	f := connect(t, tPipe, so, client.WithProtocol(client.Modern))
	ctx := testCtx(t)
	d := f.c.Negotiated().Discover
	if d == nil || len(d.SupportedVersions) == 0 || d.Instructions == "" || d.Instructions != f.c.Instructions() {
		t.Fatalf("Negotiated().Discover = %+v, want the negotiation's result (instructions %q)", d, f.c.Instructions())
	}
	original := d.Instructions
	sent := count(f.srv, protocol.MethodDiscover)

	var res protocol.DiscoverResult
	if err := f.c.Call(ctx, protocol.MethodDiscover, nil, &res); err != nil || res.Instructions != "changed" {
		t.Fatalf("Call(server/discover) = %+v, %v", res, err)
	}
	if got := f.c.Negotiated().Discover; got == nil || got.Instructions != "changed" || f.c.Instructions() != "changed" || f.c.ServerCapabilities().Prompts != nil {
		t.Errorf("after Call: Discover %+v, Instructions %q, capabilities %+v; want the new result", got, f.c.Instructions(), f.c.ServerCapabilities())
	}
	if err := f.c.Call(ctx, protocol.MethodDiscover, nil, nil); err != nil {
		t.Fatal(err)
	}
	if n := count(f.srv, protocol.MethodDiscover); n != sent+2 {
		t.Errorf("two Calls of a fresh server/discover sent %d requests, want 2", n-sent)
	}
	if f.c.Instructions() != original {
		t.Errorf("Instructions = %q after the second Call, want %q", f.c.Instructions(), original)
	}
	if err := f.c.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if n := count(f.srv, protocol.MethodDiscover); n != sent+3 {
		t.Errorf("modern Ping sent %d server/discover, want 1", n-sent-2)
	}
	err := f.c.Call(ctx, protocol.MethodDiscover, nil, nil)
	if e, ok := errors.AsType[*client.Error](err); !ok || e.Kind != client.KindProtocol {
		t.Errorf("Call(server/discover) with a result that is no DiscoverResult = %v, want a protocol-kind *Error", err)
	}
	if got := f.c.Negotiated().Discover; got == nil || got.Instructions != original {
		t.Errorf("after an invalid result: Discover = %+v, want the last valid one", got)
	}

	legacy := connect(t, tPipe, testserver.Options{}, client.WithProtocol(client.Legacy))
	if d := legacy.c.Negotiated().Discover; d != nil {
		t.Errorf("legacy Negotiated().Discover = %+v, want nil", d)
	}
}
