package engine

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// BenchmarkConnect measures one connect and close of a session: over the
// in-memory pipe (the lean server of bench_test.go) and over Streamable
// HTTP (an httptest server; its allocations count too, the same before
// and after a change), in both eras. The legacy cases probe first and
// fall back to initialize, as ModeAuto does against a legacy server;
// the HTTP legacy server declares no capabilities ("http-legacy") or
// tools.listChanged ("http-legacy-listchanged").
func BenchmarkConnect(b *testing.B) {
	for _, era := range []string{"legacy", "modern"} {
		legacy := era == "legacy"
		b.Run("pipe-"+era, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tr := &pipeOnce{legacy: legacy}
				s, err := Connect(b.Context(), tr, Config{})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
				<-tr.done
			}
		})
		b.Run("http-"+era, func(b *testing.B) { benchmarkConnectHTTP(b, legacy, false) })
		if legacy {
			b.Run("http-legacy-listchanged", func(b *testing.B) { benchmarkConnectHTTP(b, true, true) })
		}
	}
}

func benchmarkConnectHTTP(b *testing.B, legacy, listChanged bool) {
	h := &httpScript{serve: func(w http.ResponseWriter, r *http.Request, req *jsonrpc.Request) {
		switch {
		case !legacy:
			serveModernHTTP(w, req)
		case req.Method == protocol.MethodDiscover:
			writeRPCError(w, http.StatusBadRequest, req, -32601, "unknown method")
		case req.Method == protocol.MethodInitialize && !listChanged:
			res := initResult(protocol.LatestLegacyVersion)
			res["capabilities"] = map[string]any{}
			w.Header().Set(protocol.HeaderSessionID, "sess-1")
			writeResult(w, req, res)
		default:
			serveLegacyHTTP(w, req)
		}
	}}
	srv := httptest.NewServer(h)
	defer srv.Close()
	b.ReportAllocs()
	for b.Loop() {
		h.mu.Lock()
		h.methods, h.headers = h.methods[:0], h.headers[:0]
		h.mu.Unlock()
		tr := &transport.StreamableHTTP{URL: srv.URL}
		s, err := Connect(b.Context(), tr, Config{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}
