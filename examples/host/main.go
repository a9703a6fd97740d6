// The host command runs every MCP server of a configuration file at once
// with package host: it connects them concurrently, prints each server's
// state, the merged catalogue under collision-safe names and its
// function declarations for an LLM, and calls one tool of each server.
//
// Usage:
//
//	host [-config FILE] [-call TOOL]
//
// FILE is a Claude Desktop or Cursor "mcpServers" file, a Claude Code
// .mcp.json or a VS Code .vscode/mcp.json. Without -config the example
// writes a config of its own whose servers are copies of this program
// (started with -serve NAME, a tiny stdio MCP server), plus one server
// that does not exist, to show that it fails alone:
//
//	go run ./examples/host
//	go run ./examples/host -config ~/.cursor/mcp.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/conduitmcp/conduit/host"
)

func main() {
	config := flag.String("config", "", "the MCP configuration `FILE` (default: a demo config)")
	serve := flag.String("serve", "", "run as the demo stdio server `NAME` (used by the demo config)")
	flag.Parse()
	if *serve != "" {
		serveDemo(*serve)
		return
	}
	if err := run(*config); err != nil {
		log.Fatal(err)
	}
}

func run(path string) error {
	if path == "" {
		p, cleanup, err := demoConfig()
		if err != nil {
			return err
		}
		defer cleanup()
		path = p
	}
	cfg, err := host.Load(path, nil)
	if err != nil {
		return err
	}
	h, err := host.Start(cfg, &host.Options{Server: func(host.ServerConfig) host.ServerOptions {
		return host.ServerOptions{ConnectTimeout: 10 * time.Second}
	}})
	if err != nil {
		return err
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := h.Wait(ctx); err != nil {
		return err
	}
	fmt.Println("Servers:")
	for _, st := range h.Servers() {
		fmt.Printf("  %-10s %-6s %-7s tools=%d", st.Name, st.Type, st.State, st.Tools)
		if st.Err != nil {
			fmt.Printf("  error: %v", st.Err)
		}
		fmt.Println()
	}
	fmt.Println("\nFunction declarations for the model:")
	decls, _ := json.MarshalIndent(h.FunctionDeclarations(), "  ", "  ")
	fmt.Printf("  %s\n", decls)
	fmt.Println("\nOne call per server:")
	called := map[string]bool{}
	for _, t := range h.Tools() {
		if called[t.Server] {
			continue
		}
		called[t.Server] = true
		res, err := h.CallTool(ctx, t.Name, map[string]any{})
		switch {
		case err != nil:
			fmt.Printf("  %s: %v\n", t.Name, err)
		case len(res.Content) > 0:
			fmt.Printf("  %s: %s\n", t.Name, res.Content[0].Text)
		}
	}
	return nil
}

// demoConfig writes a Claude Desktop style config that runs this program
// twice as a server, plus a server whose command does not exist.
func demoConfig() (string, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return "", nil, err
	}
	dir, err := os.MkdirTemp("", "conduit-host-example")
	if err != nil {
		return "", nil, err
	}
	servers := map[string]any{
		"alpha":   map[string]any{"command": exe, "args": []string{"-serve", "alpha"}},
		"beta":    map[string]any{"command": exe, "args": []string{"-serve", "beta"}},
		"missing": map[string]any{"command": filepath.Join(dir, "no-such-server")},
	}
	data, _ := json.MarshalIndent(map[string]any{"mcpServers": servers}, "", "  ")
	p := filepath.Join(dir, "claude_desktop_config.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return p, func() { os.RemoveAll(dir) }, nil
}
