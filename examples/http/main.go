// The http command dials an MCP server over Streamable HTTP (or WebSocket
// for a ws:// URL), prints how the era was negotiated, and exercises the
// main features: tools, a typed tool call, prompts and resources.
//
// Usage:
//
//	http [-protocol auto|modern|legacy|YYYY-MM-DD] [url]
//
// Without a URL it serves Conduit's dual-era test server on 127.0.0.1 and
// dials that.
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
)

func main() {
	protoFlag := flag.String("protocol", "auto", "auto, modern, legacy or a version to pin")
	flag.Parse()

	url := flag.Arg(0)
	if url == "" {
		// No server given: serve Conduit's test server (package
		// conduittest) on 127.0.0.1 for the duration of the run.
		srv, err := conduittest.New()
		if err != nil {
			log.Fatal(err)
		}
		defer srv.Close()
		url = srv.URL()
	}
	var proto client.Protocol
	switch *protoFlag {
	case "auto":
		proto = client.Auto
	case "modern":
		proto = client.Modern
	case "legacy":
		proto = client.Legacy
	default:
		proto = client.Pin(*protoFlag)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()

	c, err := client.Dial(ctx, url, client.WithProtocol(proto), client.WithCallDefaults(client.WithIdleTimeout(30*time.Second)))
	if err != nil {
		log.Fatalf("dialing %s: %v", url, err)
	}
	defer c.Close()

	fmt.Printf("%s: era %s, protocol %s, transport %s\n", url, c.Negotiated().Era, c.Negotiated().Version, c.Negotiated().Transport)
	for _, step := range c.Negotiated().Trace {
		fmt.Printf("  negotiation: %s sent=%s outcome=%s verdict=%s %s\n", step.Step, step.Sent, step.Outcome, step.Verdict, step.Err)
	}

	n := 0
	for _, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatalf("listing tools: %v", err)
		}
		n++
	}
	fmt.Printf("%d tools\n", n)

	type sum struct {
		Sum float64 `json:"sum"`
	}
	if s, _, err := client.CallToolAs[sum](ctx, c, "add", map[string]any{"a": 20, "b": 22}); err == nil {
		fmt.Printf("add(20, 22) = %v\n", s.Sum)
	} else {
		fmt.Printf("add: %v\n", err)
	}
	for p, err := range c.Prompts(ctx) {
		if err != nil {
			fmt.Printf("prompts: %v\n", err)
			break
		}
		fmt.Printf("prompt %s\n", p.Name)
	}
	for r, err := range c.Resources(ctx) {
		if err != nil {
			fmt.Printf("resources: %v\n", err)
			break
		}
		fmt.Printf("resource %s (%s)\n", r.URI, r.MIMEType)
	}
}
