package transport_test

import (
	"context"
	"errors"
	"log"
	"os"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

// Run a server published as an npm package, passing it one secret from
// the environment and keeping a copy of its stderr. Calling Connect again
// after the process ended starts it again.
func ExampleCommand() {
	t := transport.Command("npx", "-y", "@modelcontextprotocol/server-everything")
	t.Env = []string{"API_KEY=" + os.Getenv("EVERYTHING_API_KEY")}
	t.Stderr = os.Stderr
	t.TerminateDelay = time.Second

	ctx := context.Background()
	conn, err := t.Connect(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	for {
		msg, err := conn.Read(ctx)
		if exit, ok := errors.AsType[*transport.ExitError](err); ok {
			log.Printf("server exited with code %d: %s", exit.Code, exit.Stderr)
			return
		}
		if err != nil {
			log.Fatal(err)
		}
		log.Printf("%#v", msg)
	}
}
