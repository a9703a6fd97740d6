package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"

	"github.com/conduitmcp/conduit/cache"
	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/internal/engine"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/negotiation"
	"github.com/conduitmcp/conduit/protocol"
)

// exampleTask connects as exampleClient does and starts the test server's
// tool "task" with the given number of steps (ExampleClient_StartTool
// shows the start).
func exampleTask(steps int, opts ...client.Option) (*client.Client, *client.Task, func()) {
	c, done := exampleClient(opts...)
	task, _, err := c.StartTool(context.Background(), "task", map[string]any{"steps": steps})
	if err != nil {
		log.Fatal(err)
	}
	return c, task, done
}

func ExampleClient_Prompts() {
	c, done := exampleClient()
	defer done()
	for p, err := range c.Prompts(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		if p.Name == "greet" {
			fmt.Println(p.Name, p.Arguments[0].Name, p.Arguments[0].Required)
		}
	}
	// Output: greet name true
}

func ExampleClient_Resources() {
	c, done := exampleClient(client.WithProtocol(client.Legacy))
	defer done()
	for r, err := range c.Resources(context.Background()) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(r.URI, r.MIMEType)
	}
	// Output:
	// file:///hello.txt text/plain
	// file:///logo.png image/png
	// file:///config.json application/json
}

func ExampleClient_ResourceTemplates() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()
	for rt, err := range c.ResourceTemplates(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(rt.URITemplate)
	}
	// A URI the template describes is read like any other resource.
	r, err := c.ReadResource(ctx, "file:///hello.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Contents[0].Text)
	// Output:
	// file:///{path}
	// Hello, world!
}

func ExampleClient_AwaitTask() {
	// 2025-11-25 core tasks: the call is task-augmented on request.
	c, task, done := exampleTask(1, client.WithProtocol(client.Legacy))
	defer done()
	ctx := context.Background()
	res, err := c.AwaitTask(ctx, task)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Extension, res.Failed())
	// Output: false false
}

func ExampleClient_CancelTask() {
	c, task, done := exampleTask(100, client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	defer done()
	ctx := context.Background()
	if err := c.CancelTask(ctx, task.ID); err != nil {
		log.Fatal(err)
	}
	_, err := c.AwaitTask(ctx, task)
	var ce *client.Error
	fmt.Println(errors.As(err, &ce) && ce.Kind == client.KindCanceled, errors.Is(err, context.Canceled))
	// Output: true false
}

func ExampleClient_TaskStatus() {
	c, task, done := exampleTask(5, client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	defer done()
	ctx := context.Background()
	st, err := c.TaskStatus(ctx, task.ID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(st.Status, st.PollInterval > 0)
	// Output: working true
}

func ExampleClient_Tasks() {
	c, done := exampleClient(client.WithProtocol(client.Legacy))
	defer done()
	ctx := context.Background()
	if _, _, err := c.StartTool(ctx, "task", map[string]any{"steps": 3}); err != nil {
		log.Fatal(err)
	}
	for task, err := range c.Tasks(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(task.Status)
	}
	// Output: working
}

func ExamplePin() {
	c, done := exampleClient(client.WithProtocol(client.Pin(protocol.Version20250618)))
	defer done()
	fmt.Println(c.Negotiated().Era, c.Negotiated().Version)
	// Output: legacy 2025-06-18
}

func ExampleCapabilityOptions_strict() {
	c, done := exampleClient(client.WithCapabilityOptions(client.CapabilityOptions{Strict: true}))
	defer done()
	// The test server advertises tools, so the call goes through.
	_, err := c.CallTool(context.Background(), "echo", map[string]any{"text": "x"})
	fmt.Println(err, errors.Is(err, client.ErrNotSupported))
	// Output: <nil> false
}

func ExampleClient_Negotiated() {
	c, done := exampleClient()
	defer done()
	for _, s := range c.Negotiated().Trace {
		fmt.Println(s.Step, s.Verdict)
	}
	// Output: probe modern
}

func ExampleClient_ServerCapabilities() {
	c, done := exampleClient()
	defer done()
	caps := c.ServerCapabilities()
	fmt.Println(caps.Tools.ListChanged, caps.Resources.Subscribe, c.Instructions() != "")
	// Output: true true true
}

func ExampleNewFileEraCache() {
	dir, err := os.MkdirTemp("", "conduit-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	eras := client.NewFileEraCache(filepath.Join(dir, "eras.json"))
	eras.StoreEra(context.Background(), "https://example.com/mcp", cache.EraRecord{Era: negotiation.EraModern, Version: protocol.Version20260728})

	// Another process (here: another value) reads the same file.
	rec, ok, _ := client.NewFileEraCache(filepath.Join(dir, "eras.json")).LoadEra(context.Background(), "https://example.com/mcp")
	fmt.Println(rec.Era, rec.Version, ok)
	// Output: modern 2026-07-28 true
}

func ExampleError() {
	t, stop := exampleServer(testserver.Options{Era: testserver.LegacyOnly})
	defer stop()

	// A modern-only client cannot talk to a legacy-only server.
	_, err := client.Connect(context.Background(), t, client.WithProtocol(client.Modern))
	var ce *client.Error
	var ne *engine.NegotiationError
	fmt.Println(errors.As(err, &ce), ce.Op, ce.Kind)
	fmt.Println(errors.As(err, &ne), len(ne.Trace) > 0)
	// Output:
	// true connect negotiation
	// true true
}

func ExampleWithMessageLog() {
	var mu sync.Mutex
	var methods []string
	_, done := exampleClient(client.WithMessageLog(func(sent bool, msg jsonrpc.Message) {
		if req, ok := msg.(*jsonrpc.Request); ok && sent {
			mu.Lock()
			methods = append(methods, req.Method)
			mu.Unlock()
		}
	}))
	defer done()
	mu.Lock()
	fmt.Println(methods)
	mu.Unlock()
	// Output: [server/discover]
}
