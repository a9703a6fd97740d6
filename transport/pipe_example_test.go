package transport_test

import (
	"bufio"
	"context"
	"fmt"

	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/transport"
)

// A server in the same process answers on the other end of the pipe.
func ExampleNewPipe() {
	p, server := transport.NewPipe()
	go func() {
		defer server.Close()
		line, err := bufio.NewReader(server).ReadBytes('\n')
		if err != nil {
			return
		}
		m, _ := jsonrpc.DecodeMessage(line)
		resp, _ := jsonrpc.NewResponse(m.(*jsonrpc.Request).ID, map[string]string{"name": "in-memory"})
		b, _ := jsonrpc.EncodeMessage(resp)
		server.Write(append(b, '\n'))
	}()

	ctx := context.Background()
	conn, err := p.Connect(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	req, _ := jsonrpc.NewRequest(jsonrpc.Int64ID(1), "server/discover", nil)
	if err := conn.Write(ctx, req); err != nil {
		fmt.Println(err)
		return
	}
	m, err := conn.Read(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(m.(*jsonrpc.Response).Result))
	// Output: {"name":"in-memory"}
}
