package transport_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"time"

	"github.com/conduitmcp/conduit/transport"
)

func ExampleWebSocket() {
	t := &transport.WebSocket{
		URL:          "wss://mcp.example.com/ws",
		Header:       http.Header{"Authorization": {"Bearer " + "token"}},
		PingInterval: 30 * time.Second,
	}
	conn, err := t.Connect(context.Background())
	if he, ok := errors.AsType[*transport.HTTPError](err); ok && he.StatusCode == http.StatusUnauthorized {
		log.Fatalf("authorization needed: %s", he.WWWAuthenticate)
	}
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
}
