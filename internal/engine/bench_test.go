package engine

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// pipeOnce is a transport over one in-memory pipe served by a lean echo
// server that allocates nothing per message, so that -benchmem measures
// the client.
type pipeOnce struct {
	legacy bool
	done   chan struct{}
}

func (p *pipeOnce) Connect(ctx context.Context) (transport.Conn, error) {
	pipe, server := transport.NewPipe()
	conn, err := pipe.Connect(ctx)
	if err != nil {
		return nil, err
	}
	p.done = make(chan struct{})
	go p.serve(server)
	return conn, nil
}

func (p *pipeOnce) serve(rw io.ReadWriteCloser) {
	defer close(p.done)
	defer rw.Close()
	br := bufio.NewReaderSize(rw, 64<<10)
	var out []byte
	disc, _ := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: jsonrpc.Int64ID(0), Result: mustJSON(discoverResult)})
	_ = disc
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return
		}
		s, e, found, err := topLevelMember(line, "id")
		if err != nil || !found {
			continue // a notification
		}
		id := line[s:e]
		out = append(out[:0], `{"jsonrpc":"2.0","id":`...)
		out = append(out, id...)
		switch {
		case bytes.Contains(line, []byte(`"method":"server/discover"`)):
			if p.legacy {
				out = append(out, `,"error":{"code":-32601,"message":"no"}}`...)
			} else {
				out = append(out, `,"result":`...)
				out = append(out, mustJSON(discoverResult)...)
				out = append(out, '}')
			}
		case bytes.Contains(line, []byte(`"method":"initialize"`)):
			out = append(out, `,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"b","version":"1"}}}`...)
		default:
			out = append(out, `,"result":{"resultType":"complete","content":[{"type":"text","text":"ok"}]}}`...)
		}
		out = append(out, '\n')
		if _, err := rw.Write(out); err != nil {
			return
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// pipeSession connects a session over a pipeOnce (legacy or modern);
// stop closes it and waits for the pipe's server to end.
func pipeSession(b *testing.B, legacy bool) (s *Session, stop func()) {
	tr := &pipeOnce{legacy: legacy}
	s, err := Connect(b.Context(), tr, Config{})
	if err != nil {
		b.Fatal(err)
	}
	return s, func() {
		s.Close()
		<-tr.done
	}
}

func benchmarkCall(b *testing.B, legacy bool, params any) {
	s, stop := pipeSession(b, legacy)
	defer stop()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := s.Call(b.Context(), protocol.MethodToolsCall, params, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCallModern measures one modern tools/call round trip over an
// in-memory pipe (params encoded once, _meta spliced, resultType peeked).
func BenchmarkCallModern(b *testing.B) { benchmarkCall(b, false, mapParams) }

// BenchmarkCallModernRaw is BenchmarkCallModern with params already
// encoded (json.RawMessage): what remains is the session and the
// transport, without the caller's json.Marshal.
func BenchmarkCallModernRaw(b *testing.B) { benchmarkCall(b, false, rawParams) }

var (
	mapParams = map[string]any{"name": "echo", "arguments": map[string]string{"text": "hello"}}
	rawParams = json.RawMessage(`{"name":"echo","arguments":{"text":"hello"}}`)
)

// BenchmarkCallLegacy measures one legacy tools/call round trip.
func BenchmarkCallLegacy(b *testing.B) { benchmarkCall(b, true, mapParams) }

// BenchmarkCallModernParallel measures multiplexed concurrent calls.
func BenchmarkCallModernParallel(b *testing.B) {
	s, stop := pipeSession(b, false)
	defer stop()
	params := map[string]any{"name": "echo"}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Call(b.Context(), protocol.MethodToolsCall, params, nil); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
