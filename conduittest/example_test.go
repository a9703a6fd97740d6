package conduittest_test

import (
	"bytes"
	"context"
	"fmt"
	"log"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

// A server in memory, used through the public client. In a test,
// conduittest.NewServer(t) closes it with the test.
func Example() {
	srv, err := conduittest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, err := c.CallTool(ctx, "add", map[string]any{"a": 2, "b": 3})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Negotiated().Era, res.Text())
	fmt.Println(srv.Count("tools/call"), "call received")
	// Output:
	// modern 5
	// 1 call received
}

// A legacy-only server over Streamable HTTP: the client's probe falls
// back to initialize.
func ExampleServer_URL() {
	srv, err := conduittest.New(conduittest.WithEra(conduittest.Legacy))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Dial(ctx, srv.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	fmt.Println(c.Negotiated().Era, c.Negotiated().Version)
	for _, step := range c.Negotiated().Trace {
		fmt.Println(step.Step, step.Sent)
	}
	// Output:
	// legacy 2025-11-25
	// probe server/discover 2026-07-28
	// initialize initialize 2025-11-25
}

// A fault makes the server misbehave: here the first tools/call gets a
// JSON-RPC error.
func ExampleFault() {
	fault := conduittest.FaultRPCError.On("tools/call").With("code", "-32603").Times(1)
	fmt.Println(fault)
	srv, err := conduittest.New(conduittest.WithFaults(fault))
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	fmt.Println(err != nil)
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hi"})
	fmt.Println(res.Text(), err, srv.FaultHits())
	// Output:
	// rpc-error:method=tools/call,code=-32603,times=1
	// true
	// hi <nil> [1]
}

// The table conduit serve --list-faults prints.
func ExampleFaults() {
	for _, f := range conduittest.Faults()[:3] {
		fmt.Printf("%s (%s): %s\n", f.Fault, f.Method, f.Description)
	}
	// Output:
	// result (server/discover): answers with the raw JSON result=…
	// discover-invalid (server/discover): server/discover answers a DiscoverResult-shaped but invalid result
	// discover-not-shaped (server/discover): server/discover answers a result that is not DiscoverResult-shaped (legacy evidence)
}

// Record a session, then replay it: the replay answers the same requests
// the same way, without the original server.
func ExampleNewRecorder() {
	srv, err := conduittest.New()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	var transcript bytes.Buffer
	rec := conduittest.NewRecorder(&transcript)
	c, err := client.Connect(ctx, srv.Transport(), rec.Option())
	if err != nil {
		log.Fatal(err)
	}
	res, _ := c.CallTool(ctx, "echo", map[string]any{"text": "recorded"})
	fmt.Println(res.Text())
	c.Close()
	rec.Flush()

	entries, err := conduittest.ReadTranscript(&transcript)
	if err != nil {
		log.Fatal(err)
	}
	rp := conduittest.StartReplay(entries, func(msg string) { fmt.Println(msg) }) // in a test: NewReplay(t, entries)
	defer rp.Close()
	c, err = client.Connect(ctx, rp.Transport())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	res, _ = c.CallTool(ctx, "echo", map[string]any{"text": "recorded"})
	fmt.Println(res.Text(), "(replayed)")
	_, err = c.CallTool(ctx, "echo", map[string]any{"text": "new"})
	fmt.Println(err != nil)
	// Output:
	// recorded
	// recorded (replayed)
	// conduittest: replay: the transcript has no request matching tools/call (id 3)
	// nearest recorded request (transcript line 3), - recorded, + sent:
	//   - params.arguments.text: "recorded"
	//   + params.arguments.text: "new"
	// true
}
