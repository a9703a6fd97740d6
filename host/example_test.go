package host_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/conduitmcp/conduit/host"
)

func ExampleParse() {
	data := []byte(`{"mcpServers": {
		"github": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"Authorization": "Bearer ${TOKEN:-none}"}},
		"files":  {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}
	}}`)
	cfg, err := host.Parse(".mcp.json", data, &host.LoadOptions{
		LookupEnv: func(string) (string, bool) { return "", false }, // nothing set
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, s := range cfg.Servers {
		fmt.Printf("%s: %s %s%s", s.Name, s.Type, s.Command, s.URL)
		if auth := s.Header.Get("Authorization"); auth != "" {
			fmt.Printf(" (Authorization: %s)", auth)
		}
		fmt.Println()
	}
	_, err = host.Parse(".mcp.json", []byte(`{"mcpServers": {"x": {"type": "grpc", "url": "http://h/"}}}`), nil)
	fmt.Println(err)
	// Output:
	// files: stdio npx
	// github: http https://api.example.com/mcp (Authorization: Bearer none)
	// host: .mcp.json: server "x": type: unknown transport type "grpc" (want stdio, http, sse or websocket)
}

func ExampleSanitize() {
	fmt.Println(host.Sanitize("my server" + "__" + "search.files"))
	// Output: my_server__search_files
}

func ExampleStart() {
	cfg, err := host.Load(".mcp.json", nil)
	if err != nil {
		log.Fatal(err)
	}
	h, err := host.Start(cfg, &host.Options{Server: func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{ConnectTimeout: 10 * time.Second}
	}})
	if err != nil {
		log.Fatal(err)
	}
	defer h.Close()
	ctx := context.Background()
	h.Wait(ctx)
	for _, st := range h.Servers() {
		fmt.Println(st.Name, st.State, st.Err)
	}
	for _, d := range h.FunctionDeclarations() {
		fmt.Println(d.Name, d.Description)
	}
	res, err := h.CallTool(ctx, "github__search_issues", map[string]any{"q": "is:open"})
	fmt.Println(res, err)
}
