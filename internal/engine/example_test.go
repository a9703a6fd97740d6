package engine_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// serveModern is a minimal modern MCP server on an in-memory pipe.
func serveModern(rw io.ReadWriteCloser) {
	defer rw.Close()
	sc := bufio.NewScanner(rw)
	for sc.Scan() {
		m, err := jsonrpc.DecodeMessage(sc.Bytes())
		req, ok := m.(*jsonrpc.Request)
		if err != nil || !ok || req.IsNotification() {
			continue
		}
		var result any = map[string]any{"resultType": "complete", "content": []any{map[string]any{"type": "text", "text": "3"}}}
		if req.Method == protocol.MethodDiscover {
			result = map[string]any{
				"resultType": "complete", "supportedVersions": []string{protocol.Version20260728},
				"capabilities": map[string]any{"tools": map[string]any{}}, "ttlMs": 0, "cacheScope": "private",
			}
		}
		resp, _ := jsonrpc.NewResponse(req.ID, result)
		b, _ := jsonrpc.EncodeMessage(resp)
		rw.Write(append(b, '\n'))
	}
}

func ExampleConnect() {
	pipe, server := transport.NewPipe()
	go serveModern(server)

	s, err := engine.Connect(context.Background(), pipe, engine.Config{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println(s.Era(), s.ProtocolVersion())
	for _, step := range s.Trace() {
		fmt.Println(step.Step, step.Sent, "->", step.Verdict)
	}

	// A call on the session: the result is the server's raw JSON.
	raw, err := s.Call(context.Background(), protocol.MethodToolsCall,
		map[string]any{"name": "add", "arguments": map[string]int{"a": 1, "b": 2}}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	var res struct {
		Content []protocol.Content `json:"content"`
	}
	json.Unmarshal(raw, &res)
	fmt.Println(res.Content[0].Text)
	// Output:
	// modern 2026-07-28
	// probe server/discover 2026-07-28 -> modern
	// 3
}
