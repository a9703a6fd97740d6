package jsonrpc_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
)

var (
	benchRequest  = []byte(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	benchResponse = []byte(`{"jsonrpc":"2.0","id":42,"result":{"resultType":"complete","content":[{"type":"text","text":"3"}],"isError":false}}`)
	benchSink     jsonrpc.Message
	benchBytes    []byte
)

func BenchmarkDecodeRequest(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchRequest)))
	for b.Loop() {
		m, err := jsonrpc.DecodeMessage(benchRequest)
		if err != nil {
			b.Fatal(err)
		}
		benchSink = m
	}
}

func BenchmarkDecodeResponse(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchResponse)))
	for b.Loop() {
		m, err := jsonrpc.DecodeMessage(benchResponse)
		if err != nil {
			b.Fatal(err)
		}
		benchSink = m
	}
}

func BenchmarkEncode(b *testing.B) {
	req := &jsonrpc.Request{ID: jsonrpc.Int64ID(42), Method: "tools/call",
		Params: json.RawMessage(`{"name":"add","arguments":{"a":1,"b":2},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}`)}
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out, err := jsonrpc.EncodeMessage(req)
			if err != nil {
				b.Fatal(err)
			}
			benchBytes = out
		}
	})
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			out, err := jsonrpc.AppendMessage(buf[:0], req)
			if err != nil {
				b.Fatal(err)
			}
			benchBytes = out
		}
	})
}

// BenchmarkDecodeLargeResult decodes a response with a 1 MiB result:
// DecodeMessage copies the result, DecodeMessageOwned keeps the buffer.
func BenchmarkDecodeLargeResult(b *testing.B) {
	msg := []byte(`{"jsonrpc":"2.0","id":42,"result":{"content":[{"type":"text","text":"` + strings.Repeat("x", 1<<20) + `"}]}}`)
	b.Run("copy", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			m, err := jsonrpc.DecodeMessage(msg)
			if err != nil {
				b.Fatal(err)
			}
			benchSink = m
		}
	})
	b.Run("owned", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(msg)))
		for b.Loop() {
			// The buffer is the caller's to give; reusing it across
			// iterations is fine here because nothing reads old messages.
			m, err := jsonrpc.DecodeMessageOwned(msg)
			if err != nil {
				b.Fatal(err)
			}
			benchSink = m
		}
	})
}
