package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/conduitmcp/conduit/cache"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/handler"
	"github.com/conduitmcp/conduit/internal/testserver"
	"github.com/conduitmcp/conduit/jsonrpc"
	"github.com/conduitmcp/conduit/protocol"
	"github.com/conduitmcp/conduit/transport"
)

// exampleServer runs the dual-era test server behind an in-memory pipe
// and returns the client transport and a function that stops the server.
func exampleServer(opts testserver.Options) (transport.Transport, func()) {
	srv := testserver.New(opts)
	pipe, end := transport.NewPipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ServeStream(context.Background(), end, end)
	}()
	return pipe, func() {
		end.Close()
		srv.Close()
		<-done
	}
}

// exampleClient connects to a fresh in-process test server and returns
// the client and a function that closes it and stops the server. The
// package-level examples (Connect, Dial) show the whole connect.
func exampleClient(opts ...client.Option) (*client.Client, func()) {
	return exampleClientOn(testserver.Options{}, opts...)
}

// exampleClientOn is exampleClient with a test server made with so.
func exampleClientOn(so testserver.Options, opts ...client.Option) (*client.Client, func()) {
	t, stop := exampleServer(so)
	c, err := client.Connect(context.Background(), t, opts...)
	if err != nil {
		log.Fatal(err)
	}
	return c, func() { c.Close(); stop() }
}

func ExampleConnect() {
	t, stop := exampleServer(testserver.Options{})
	defer stop()
	ctx := context.Background()

	c, err := client.Connect(ctx, t)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Negotiated().Era, c.Negotiated().Version, c.ServerInfo().Name)
	// Output: modern 2026-07-28 conduit-testserver
}

func ExampleDial() {
	srv := testserver.New(testserver.Options{Era: testserver.LegacyOnly})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()

	c, err := client.Dial(context.Background(), ts.URL, client.WithProtocol(client.Auto))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Negotiated().Era, c.Negotiated().Version)
	// Output: legacy 2025-11-25
}

func ExampleClient_Tools() {
	c, done := exampleClientOn(testserver.Options{PageSize: 3})
	defer done()
	ctx := context.Background()

	n := 0
	for tool, err := range c.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		if n < 3 {
			fmt.Println(tool.Name)
		}
		n++
	}
	fmt.Println(n > 3)
	// Output:
	// echo
	// add
	// slow
	// true
}

func ExampleClient_CallTool() {
	c, done := exampleClient(client.WithProtocol(client.Legacy))
	defer done()
	ctx := context.Background()

	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hello"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text(), res.Failed())
	// Output: hello false
}

func ExampleCallToolAs() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	type sum struct {
		Sum float64 `json:"sum"`
	}
	s, _, err := client.CallToolAs[sum](ctx, c, "add", map[string]any{"a": 1, "b": 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(s.Sum)
	// Output: 3
}

func ExampleClient_GetPrompt() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	p, err := c.GetPrompt(ctx, "greet", map[string]string{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Messages[0].Content.Text)
	// Output: Hello, Ada!
}

func ExampleClient_ReadResource() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	r, err := c.ReadResource(ctx, "file:///hello.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Contents[0].Text)
	_, err = c.ReadResource(ctx, "file:///missing.txt")
	fmt.Println(jsonrpc.IsResourceNotFound(err))
	// Output:
	// Hello, world!
	// true
}

func ExampleClient_Complete() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()

	r, err := c.Complete(ctx, protocol.PromptReference("greet"), protocol.CompleteArgument{Name: "name", Value: "a"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.Completion.Values)
	// Output: [albert alice]
}

func ExampleClient_Subscribe() {
	srv := testserver.New(testserver.Options{})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, ts.URL)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	sub, err := c.Subscribe(ctx, client.SubscribeOptions{ToolsListChanged: true, Resources: []string{"file:///hello.txt"}})
	if err != nil {
		log.Fatal(err)
	}
	defer sub.Close()
	fmt.Printf("%+v\n", sub.Acknowledged())

	srv.NotifyResourceUpdated("file:///hello.txt")
	ev := <-sub.Events()
	fmt.Println(ev.Method, ev.URI)
	// Output:
	// {ToolsListChanged:true PromptsListChanged:false ResourcesListChanged:false Resources:[file:///hello.txt] Buffer:0}
	// notifications/resources/updated file:///hello.txt
}

func ExampleClient_StartTool() {
	c, done := exampleClient(client.WithCapabilityOptions(client.CapabilityOptions{TasksExtension: true}))
	defer done()
	ctx := context.Background()

	task, _, err := c.StartTool(ctx, "task", map[string]any{"steps": 2})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status)
	res, err := c.AwaitTask(ctx, task)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(task.Status, res.Failed())
	// Output:
	// working
	// completed false
}

// confirmer answers every form elicitation by accepting; the schema's
// defaults fill in what it leaves out.
type confirmer struct{}

func (confirmer) Elicit(ctx context.Context, p *protocol.ElicitParams) (*protocol.ElicitResult, error) {
	return &protocol.ElicitResult{Action: protocol.ElicitAccept, Content: map[string]any{"name": "Ada"}}, nil
}

func ExampleWithHandler() {
	roots := handler.RootsListerFunc(func(context.Context) ([]protocol.Root, error) {
		return []protocol.Root{{URI: "file:///src"}}, nil
	})
	// A value implementing several handler interfaces; here a struct
	// embedding two.
	h := struct {
		confirmer
		handler.RootsListerFunc
	}{confirmer{}, roots}
	c, done := exampleClient(client.WithHandler(h))
	defer done()
	ctx := context.Background()

	caps, _ := json.Marshal(c.Negotiated().ClientCapabilities)
	fmt.Println(string(caps))
	res, err := c.CallTool(ctx, "ask_user", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	res, err = c.CallTool(ctx, "roots", nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Text())
	// Output:
	// {"roots":{},"elicitation":{"form":{}}}
	// Hello, Ada!
	// file:///src
}

func ExampleValidateElicitation() {
	schema := json.RawMessage(`{"type":"object","properties":{
		"name":{"type":"string","minLength":1},
		"notify":{"type":"boolean","default":true}},"required":["name"]}`)
	content, err := handler.ValidateElicitation(schema, map[string]any{"name": "Ada"})
	fmt.Println(content, err)
	_, err = handler.ValidateElicitation(schema, map[string]any{"notify": "yes"})
	fmt.Println(err)
	// Output:
	// map[name:Ada notify:true] <nil>
	// invalid elicitation answer: name: required; notify: want a boolean, got a string ("yes")
}

func ExampleWithCache() {
	// The server's results stay fresh for a minute.
	c, done := exampleClientOn(testserver.Options{TTL: 60e9}, client.WithCache(cache.NewMemory(0)))
	defer done()
	ctx := context.Background()

	count := func() (n int) {
		for _, err := range c.Tools(ctx) {
			if err != nil {
				log.Fatal(err)
			}
			n++
		}
		return n
	}
	a := count()
	b := count() // served from the cache
	fmt.Println(a == b)
	// Output: true
}

func ExampleWithEraCache() {
	srv := testserver.New(testserver.Options{Era: testserver.LegacyOnly})
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	defer srv.Close()
	ctx := context.Background()
	eras := client.MemoryEraCache()

	for range 2 {
		c, err := client.Dial(ctx, ts.URL, client.WithEraCache(eras))
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(c.Negotiated().Era, len(c.Negotiated().Trace) > 0)
		c.Close()
	}
	rec, _, _ := eras.LoadEra(context.Background(), ts.URL)
	fmt.Println(rec.Era, rec.Version)
	// Output:
	// legacy true
	// legacy true
	// legacy 2025-11-25
}

func ExampleClient_SetLogLevel() {
	logs := make(chan string, 1)
	h := handler.LogListenerFunc(func(ctx context.Context, p *protocol.LoggingMessageParams) {
		logs <- string(p.Level) + " " + string(p.Data)
	})
	c, done := exampleClient(client.WithHandler(h))
	defer done()
	ctx := context.Background()

	// Modern: the level travels with every later request.
	if err := c.SetLogLevel(ctx, protocol.LevelInfo); err != nil {
		log.Fatal(err)
	}
	if _, err := c.CallTool(ctx, "log", map[string]any{"level": "warning", "message": "careful"}); err != nil {
		log.Fatal(err)
	}
	fmt.Println(<-logs)
	// Output: warning "careful"
}

func ExampleClient_Ping() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()
	fmt.Println(c.Ping(ctx))
	// Output: <nil>
}

// ExampleNegotiation_discover reads the server/discover result the
// client knows, then asks the server for a fresh one.
func ExampleNegotiation_discover() {
	c, done := exampleClient()
	defer done()
	ctx := context.Background()
	fmt.Println(c.Negotiated().Discover.SupportedVersions)

	var fresh protocol.DiscoverResult
	if err := c.Call(ctx, protocol.MethodDiscover, nil, &fresh); err != nil {
		log.Fatal(err)
	}
	fmt.Println(fresh.SupportedVersions)
	// Output:
	// [2026-07-28]
	// [2026-07-28]
}
