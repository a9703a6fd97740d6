package negotiation_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

func ExampleClassifyProbe() {
	pc := negotiation.ProbeContext{
		RequestedVersion:  "2026-07-28",
		FallbackAvailable: true,
		Transport:         negotiation.TransportHTTP,
	}
	// A legacy server answers the server/discover POST with 404 and a
	// JSON-RPC "method not found".
	v := negotiation.ClassifyProbe(pc, negotiation.Outcome{
		Kind:        negotiation.OutcomeHTTP,
		Status:      404,
		ContentType: "application/json",
		Body:        []byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}`),
	})
	fmt.Println(v.Kind, v.Reason)

	// A modern server answers with a DiscoverResult.
	v = negotiation.ClassifyProbe(pc, negotiation.Outcome{
		Kind:   negotiation.OutcomeResult,
		Result: json.RawMessage(`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{}}}`),
	})
	fmt.Println(v.Kind, v.Version)

	// Without a fallback, the legacy evidence is a typed error.
	pc.FallbackAvailable = false
	v = negotiation.ClassifyProbe(pc, negotiation.Outcome{Kind: negotiation.OutcomeHTTP, Status: 405})
	fmt.Println(v.Kind, v.Err)
	// Output:
	// legacy method-not-found
	// modern 2026-07-28
	// error negotiation: legacy server evidence (status-405) but no legacy fallback (HTTP status 405)
}

func ExampleParseDiscoverResult() {
	d, err := negotiation.ParseDiscoverResult(json.RawMessage(`{
		"supportedVersions": ["2026-07-28"],
		"capabilities": {"tools": {}},
		"ttlMs": -1,
		"cacheScope": "shared",
		"_meta": {"io.modelcontextprotocol/serverInfo": {"name": "demo", "version": "1.0"}}
	}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.SupportedVersions, d.TTLMs, d.CacheScope, d.ServerInfo.Name)
	// Output: [2026-07-28] 0 private demo
}

func ExamplePickVersion() {
	v, err := negotiation.PickVersion([]string{"2025-06-18", "2025-11-25"}, nil)
	fmt.Println(v, err)
	_, err = negotiation.PickVersion([]string{"2024-11-05"}, nil)
	fmt.Println(err)
	// Output:
	// 2025-11-25 <nil>
	// negotiation: no common version
}

func ExampleClientCapabilities() {
	caps := negotiation.ClientCapabilities(nil, negotiation.CapabilityOptions{})
	b, _ := json.Marshal(caps)
	fmt.Println(string(b))

	roots := handler.RootsListerFunc(func(context.Context) ([]protocol.Root, error) { return nil, nil })
	caps = negotiation.ClientCapabilities(roots, negotiation.CapabilityOptions{Era: negotiation.EraLegacy, RootsListChanged: true})
	b, _ = json.Marshal(caps)
	fmt.Println(string(b))
	// Output:
	// {}
	// {"roots":{"listChanged":true}}
}
