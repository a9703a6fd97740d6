// The stdio command connects to an MCP server that runs as a subprocess
// speaking over stdin and stdout, negotiates the protocol era, lists the
// server's tools and calls one.
//
// Usage:
//
//	stdio [command [args...]]
//
// Without a command it starts itself with -serve, which runs Conduit's
// dual-era test server on stdio, so the example works out of the box:
//
//	go run ./examples/stdio
//	go run ./examples/stdio npx -y @modelcontextprotocol/server-everything
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/transport"
)

func main() {
	serve := flag.Bool("serve", false, "serve the built-in test server on stdio (used when no command is given)")
	legacy := flag.Bool("legacy", false, "speak the legacy era only")
	flag.Parse()
	if *serve {
		srv, err := conduittest.New()
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		if err := srv.ServeStdio(context.Background(), os.Stdin, os.Stdout); err != nil {
			os.Exit(1)
		}
		return
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	var cmd *transport.Stdio
	if args := flag.Args(); len(args) > 0 {
		cmd = transport.Command(args[0], args[1:]...)
	} else {
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		cmd = transport.Command(self, "-serve")
	}
	proto := client.Auto
	if *legacy {
		proto = client.Legacy
	}
	c, err := client.Connect(ctx, cmd, client.WithProtocol(proto))
	if err != nil {
		log.Fatalf("connecting: %v", err)
	}
	defer c.Close()

	info := c.ServerInfo()
	if info != nil {
		fmt.Printf("server %s %s\n", info.Name, info.Version)
	}
	fmt.Printf("era %s, protocol %s\n", c.Negotiated().Era, c.Negotiated().Version)

	first := ""
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatalf("listing tools: %v", err)
		}
		if first == "" {
			first = tool.Name
		}
		fmt.Printf("tool %-16s %s\n", tool.Name, tool.Description)
	}
	if first == "" {
		return
	}
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hello over stdio"})
	if err != nil {
		log.Fatalf("calling echo: %v", err)
	}
	fmt.Printf("echo: %s\n", res.Text())
}
