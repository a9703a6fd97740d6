package transport_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// benchRoundTrip measures one modern tools/call: POST, server answer, Read.
func benchRoundTrip(b *testing.B, sse bool) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		resp := httpResult(m.(*jsonrpc.Request).ID, `{"content":[{"type":"text","text":"3"}],"resultType":"complete"}`)
		if sse {
			httpWriteSSE(w, "data: "+resp+"\n\n")
			return
		}
		httpWriteJSON(w, http.StatusOK, resp)
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := (&transport.StreamableHTTP{URL: srv.URL}).Connect(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	c.(transport.ProtocolVersionSetter).SetProtocolVersion("2026-07-28")
	params := map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		req := httpRequest(b, int64(i+1), "tools/call", params)
		if err := c.Write(ctx, req); err != nil {
			b.Fatal(err)
		}
		m, err := c.Read(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if r, ok := m.(*jsonrpc.Response); !ok || r.ID != req.ID {
			b.Fatalf("Read = %+v", m)
		}
	}
}

func BenchmarkHTTPRoundTripJSON(b *testing.B) { benchRoundTrip(b, false) }

func BenchmarkHTTPRoundTripSSE(b *testing.B) { benchRoundTrip(b, true) }

// benchSchemas are tool input schemas as servers send them.
var benchSchemas = map[string]string{
	"plain":     `{"type":"object","properties":{"a":{"type":"number","description":"first"},"b":{"type":"number"},"opts":{"type":"object","properties":{"deep":{"type":"array","items":{"type":"string"}}}}},"required":["a","b"],"additionalProperties":false}`,
	"annotated": `{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"n":{"type":"integer"}},"required":["region"]}`,
}

func BenchmarkValidateToolHeaders(b *testing.B) {
	for _, name := range []string{"plain", "annotated"} {
		schema := json.RawMessage(benchSchemas[name])
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if _, err := transport.ValidateToolHeaders(schema); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
