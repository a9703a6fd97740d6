// Command example traces a few MCP calls with otelconduit and prints the
// spans with OpenTelemetry's stdout exporter. It runs the project's test
// server (conduittest) in memory, so it needs nothing else:
//
//	cd otelconduit && go run ./example
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/otelconduit"
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	exp, err := stdouttrace.New(stdouttrace.WithWriter(os.Stdout), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(ctx)

	srv, err := conduittest.New()
	if err != nil {
		return err
	}
	defer srv.Close()

	c, err := client.Connect(ctx, srv.Transport(), client.WithMiddleware(otelconduit.Middleware(
		otelconduit.WithTracerProvider(tp),
		otelconduit.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
	)))
	if err != nil {
		return err
	}
	defer c.Close()

	ctx, span := tp.Tracer("example").Start(ctx, "agent step")
	res, err := c.CallTool(ctx, "echo", map[string]any{"text": "hello"})
	span.End()
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "echo:", res.Text())
	return nil
}
