package bench

import (
	"context"
	"fmt"
	"os/exec"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---- official Go SDK client ----

type goSDKSession struct {
	cs *mcp.ClientSession
}

// connectGoSDK connects as go-sdk's README shows (NewClient, a
// CommandTransport or a StreamableClientTransport with only its Endpoint,
// Connect), plus ClientSessionOptions.ProtocolVersion, the one setting
// that picks the era.
func connectGoSDK(ctx context.Context, ep endpoint, e era) (session, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-go-sdk", Version: "1.0.0"}, nil)
	var t mcp.Transport
	if ep.url != "" {
		t = &mcp.StreamableClientTransport{Endpoint: ep.url}
	} else {
		t = &mcp.CommandTransport{Command: exec.Command(ep.argv[0], ep.argv[1:]...)}
	}
	opts := &mcp.ClientSessionOptions{ProtocolVersion: "2026-07-28"}
	if e == legacyEra {
		opts.ProtocolVersion = "2025-11-25"
	}
	cs, err := c.Connect(ctx, t, opts)
	if err != nil {
		return nil, err
	}
	return &goSDKSession{cs: cs}, nil
}

func (s *goSDKSession) echo(ctx context.Context, text string) error {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
	if err == nil && res.IsError {
		err = fmt.Errorf("go-sdk: echo failed")
	}
	return err
}

func (s *goSDKSession) big(ctx context.Context, size int) (int, error) {
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"size": size}})
	if err != nil {
		return 0, err
	}
	if len(res.Content) == 0 {
		return 0, fmt.Errorf("go-sdk: empty big result")
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return 0, fmt.Errorf("go-sdk: big result is %T", res.Content[0])
	}
	return len(tc.Text), nil
}

func (s *goSDKSession) listTools(ctx context.Context) (int, error) {
	n := 0
	for _, err := range s.cs.Tools(ctx, nil) {
		if err != nil {
			return 0, err
		}
		n++
	}
	return n, nil
}

func (s *goSDKSession) protocolVersion() string {
	if r := s.cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

func (s *goSDKSession) close() error { return s.cs.Close() }

// ---- mcp-go client ----

type mcpGoSession struct {
	c *mcpgoclient.Client
}

// connectMCPGo connects as mcp-go's README shows (a transport with no
// options, NewClient, Start, Initialize), plus WithProtocolVersion, the
// one setting that picks the era.
func connectMCPGo(ctx context.Context, ep endpoint, e era) (session, error) {
	var t mcpgotransport.Interface
	if ep.url != "" {
		ht, err := mcpgotransport.NewStreamableHTTP(ep.url)
		if err != nil {
			return nil, err
		}
		t = ht
	} else {
		t = mcpgotransport.NewStdio(ep.argv[0], nil, ep.argv[1:]...)
	}
	var opts []mcpgoclient.ClientOption
	if e == legacyEra {
		opts = append(opts, mcpgoclient.WithProtocolVersion(mcpgo.ProtocolVersion20251125))
	} else {
		opts = append(opts, mcpgoclient.WithProtocolVersion(mcpgo.ProtocolVersion20260728))
	}
	c := mcpgoclient.NewClient(t, opts...)
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	var init mcpgo.InitializeRequest
	init.Params.ClientInfo = mcpgo.Implementation{Name: "bench-mcp-go", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	if got := c.ProtocolVersion(); (e == modernEra) != (got >= mcpgo.ProtocolVersion20260728) {
		c.Close()
		return nil, fmt.Errorf("mcp-go: negotiated %s, want the %s era", got, e)
	}
	return &mcpGoSession{c: c}, nil
}

func (s *mcpGoSession) call(ctx context.Context, name string, args map[string]any) (*mcpgo.CallToolResult, error) {
	var req mcpgo.CallToolRequest
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := s.c.CallTool(ctx, req)
	if err == nil && res.IsError {
		err = fmt.Errorf("mcp-go: %s failed", name)
	}
	return res, err
}

func (s *mcpGoSession) echo(ctx context.Context, text string) error {
	_, err := s.call(ctx, "echo", map[string]any{"text": text})
	return err
}

func (s *mcpGoSession) big(ctx context.Context, size int) (int, error) {
	res, err := s.call(ctx, "big", map[string]any{"size": size})
	if err != nil {
		return 0, err
	}
	if len(res.Content) == 0 {
		return 0, fmt.Errorf("mcp-go: empty big result")
	}
	tc, ok := res.Content[0].(mcpgo.TextContent)
	if !ok {
		return 0, fmt.Errorf("mcp-go: big result is %T", res.Content[0])
	}
	return len(tc.Text), nil
}

func (s *mcpGoSession) listTools(ctx context.Context) (int, error) {
	res, err := s.c.ListTools(ctx, mcpgo.ListToolsRequest{})
	if err != nil {
		return 0, err
	}
	return len(res.Tools), nil
}

func (s *mcpGoSession) protocolVersion() string { return s.c.ProtocolVersion() }

func (s *mcpGoSession) close() error { return s.c.Close() }
