package bench

import (
	"context"
	"fmt"
	"net/http"
	"os/exec"

	mcpgoclient "github.com/mark3labs/mcp-go/client"
	mcpgotransport "github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ---- official Go SDK client ----

type goSDKSession struct {
	cs *mcp.ClientSession
	hc *http.Client
}

func connectGoSDK(ctx context.Context, ep endpoint, e era) (session, error) {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-go-sdk", Version: "1.0.0"}, nil)
	var t mcp.Transport
	var hc *http.Client
	if ep.url != "" {
		hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
		t = &mcp.StreamableClientTransport{Endpoint: ep.url, HTTPClient: hc, DisableStandaloneSSE: true}
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
	return &goSDKSession{cs: cs, hc: hc}, nil
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

func (s *goSDKSession) close() error {
	err := s.cs.Close()
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
	return err
}

// ---- mcp-go client ----

type mcpGoSession struct {
	c  *mcpgoclient.Client
	hc *http.Client
}

func connectMCPGo(ctx context.Context, ep endpoint, e era) (session, error) {
	var t mcpgotransport.Interface
	var hc *http.Client
	if ep.url != "" {
		// The same pooled HTTP client as the other libraries (the default
		// one keeps only 2 idle connections per host, which would turn
		// ConcurrentCalls into a TCP-connect benchmark).
		hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: concurrency}}
		ht, err := mcpgotransport.NewStreamableHTTP(ep.url, mcpgotransport.WithHTTPBasicClient(hc))
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
	return &mcpGoSession{c: c, hc: hc}, nil
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

func (s *mcpGoSession) close() error {
	err := s.c.Close()
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
	return err
}
