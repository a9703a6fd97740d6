// The handler command shows how a client serves what servers ask of it:
// sampling (the client's model), elicitation (asking the user) and roots.
// One handler value implements the interfaces of package handler; what it
// implements decides the advertised capabilities, and it serves the
// legacy era's server requests and the modern era's input requests
// alike.
//
// Usage:
//
//	handler [-legacy] [url]
//
// Without a URL it serves Conduit's test server (package conduittest) on
// 127.0.0.1 and dials that.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"time"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/protocol"
)

// assistant is the handler. A real one would call a model and show forms
// to a user; this one answers from canned data.
type assistant struct{}

// CreateMessage answers sampling/createMessage.
func (assistant) CreateMessage(ctx context.Context, p *protocol.CreateMessageParams) (*protocol.CreateMessageResult, error) {
	fmt.Printf("  [sampling] %d message(s), maxTokens %d\n", len(p.Messages), p.MaxTokens)
	return &protocol.CreateMessageResult{
		Role:    protocol.RoleAssistant,
		Content: json.RawMessage(`{"type":"text","text":"Paris."}`),
		Model:   "canned-model-1",
	}, nil
}

// Elicit answers form elicitation; the client validates the answer
// against the requested schema and fills in defaults.
func (assistant) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	fmt.Printf("  [elicitation] %s\n", p.Message)
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
}

// ListRoots answers roots/list.
func (assistant) ListRoots(ctx context.Context) ([]protocol.Root, error) {
	return []protocol.Root{{URI: "file:///home/ada/project", Name: "project"}}, nil
}

func main() {
	legacy := flag.Bool("legacy", false, "speak the legacy era only")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	opts := []client.Option{client.WithHandler(assistant{})}
	if *legacy {
		opts = append(opts, client.WithProtocol(client.Legacy))
	}
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
	c, err := client.Dial(ctx, url, opts...)
	if err != nil {
		log.Fatalf("connecting: %v", err)
	}
	defer c.Close()

	caps, _ := json.Marshal(c.Negotiated().ClientCapabilities)
	fmt.Printf("era %s; advertised client capabilities %s\n", c.Negotiated().Era, caps)
	for _, tool := range []string{"sample", "ask_user", "roots"} {
		fmt.Printf("calling %s\n", tool)
		res, err := c.CallTool(ctx, tool, nil)
		if err != nil {
			log.Fatalf("%s: %v", tool, err)
		}
		fmt.Printf("  -> %s\n", res.Text())
	}
}
